// `npm run bench -- faults [--kills=20] [--load-ms=3000] [--lock-ms=12000] [--store=sqlite,postgres]`
//
// The fault suite's crash and database scenarios at a longer size (issue 14, scenarios 1 and 2):
// runs the very tests of `npm test`, test/faults/crash.test.ts (kill -9 of `issuing serve` under
// 32 clients; the test kills 5 times with up to 0.7 s of load between) and
// test/faults/database.test.ts (PostgreSQL backends terminated and the server stopped; SQLite's
// disk full and its write lock held by another process), through vitest (its PostgreSQL is the
// test set-up's: embedded, or ISSUING_TEST_PG_URL), and prints per scenario and store: the faults
// injected, requests sent and answered, lost answers and resends, replays compared, the slowest
// answer, and what the invariant check looked at. The run fails if a test fails.
import * as os from "node:os"
import { option, runTestsForFigures, table } from "./support/common.js"

export async function run(args) {
  const kills = option(args, "kills", "20")
  const loadMs = option(args, "load-ms", "3000")
  const lockMs = option(args, "lock-ms", "12000")
  const stores = option(args, "store", "sqlite,postgres")
  console.log(
    `faults: ${kills} kills with up to ${loadMs} ms of load between (${stores}); database faults; load average ${os.loadavg()[0].toFixed(2)}`
  )
  // The tests' own log lines repeat the table below; show only vitest's verdict and failures.
  const { code, figures } = await runTestsForFigures(
    ["test/faults/crash.test.ts", "test/faults/database.test.ts"],
    { ISSUING_FAULTS_KILLS: kills, ISSUING_FAULTS_LOAD_MS: loadMs, ISSUING_FAULTS_LOCK_MS: lockMs, ISSUING_FAULTS_STORES: stores },
    "ISSUING_FAULTS_REPORT",
    (line) => /^(crash under load|pg_|PostgreSQL|SQLite)/.test(line)
  )
  if (figures.length > 0) {
    const rows = [
      [
        "scenario",
        "store",
        "faults",
        "sent",
        "2xx",
        "4xx",
        "500",
        "no answer",
        "timed out",
        "resent",
        "replays ok",
        "slowest ms",
        "acked",
        "refused",
        "failed",
        "unanswered once/absent",
        "deliveries",
        "attempts",
        "tries cut off",
        "wall s"
      ]
    ]
    const sum = (answered, test) => Object.entries(answered).reduce((total, [status, n]) => (test(Number(status)) ? total + n : total), 0)
    for (const f of figures) {
      const i = f.invariants
      rows.push([
        f.scenario,
        f.store,
        f.faults,
        f.sent,
        sum(f.answered, (s) => s < 300),
        sum(f.answered, (s) => s >= 400 && s < 500),
        sum(f.answered, (s) => s >= 500),
        f.lost,
        f.timedOut,
        f.retried,
        f.replaysCompared,
        f.slowestMs,
        i.acknowledged,
        i.refused,
        i.failed,
        `${i.unansweredWritten}/${i.unansweredAbsent}`,
        i.deliveries,
        i.attempts,
        i.triesCutOff,
        f.wallSeconds.toFixed(1)
      ])
    }
    console.log(table(rows))
    console.log(`invariant checks passed: ${figures.length}`)
  }
  if (code !== 0) {
    console.error(`faults: a test failed (exit ${code})`)
    process.exitCode = 1
  }
}
