// `npm run bench -- chaos [--events=10000] [--store=sqlite,postgres]`
//
// Receiver chaos at full size (issue 14, scenario 3): runs the very test of `npm test`,
// test/faults/chaos.test.ts, with ISSUING_CHAOS_EVENTS=--events (the test runs 1,500 per store),
// through vitest (its PostgreSQL is the test set-up's: embedded, or ISSUING_TEST_PG_URL), and prints
// its figures per store as a table: events and deliveries, transfers posted meanwhile (and checked
// by the shared invariant check), answers given per kind, requests the
// receivers saw, attempts recorded by what they say, the most tries one delivery needed, overlaps
// (a delivery in flight twice at once) and the longest stored response body. The run fails if the
// test fails.
import * as os from "node:os"
import { option, runTestsForFigures, table } from "./support/common.js"

const KINDS = ["ok", "error500", "hang", "reset", "slow", "hugeText", "hugeBinary"]
const RECORDED = ["ok", "slow", "hugeText", "hugeBinary", "error500", "timeout", "reset"]

export async function run(args) {
  const events = Number(option(args, "events", "10000"))
  const stores = option(args, "store", "sqlite,postgres")
  console.log(`chaos: ${events} events per store to three chaotic receivers (${stores}), load average ${os.loadavg()[0].toFixed(2)}`)
  // The test's own log lines repeat the table below; show only vitest's verdict and failures.
  const { code, figures } = await runTestsForFigures(
    ["test/faults/chaos.test.ts"],
    { ISSUING_CHAOS_EVENTS: String(events), ISSUING_CHAOS_STORES: stores },
    "ISSUING_CHAOS_REPORT",
    (line) => line.startsWith("receiver chaos on ")
  )
  if (figures.length > 0) {
    const rows = [["", ...figures.map((f) => f.store)]]
    rows.push(["events", ...figures.map((f) => f.events)])
    rows.push(["deliveries", ...figures.map((f) => f.deliveries)])
    rows.push(["transfers (checked)", ...figures.map((f) => f.transfers ?? 0)])
    rows.push(["wall seconds", ...figures.map((f) => f.wallSeconds.toFixed(1))])
    for (const kind of KINDS) rows.push([`answered ${kind}`, ...figures.map((f) => f.injected[kind] ?? 0)])
    rows.push(["requests seen", ...figures.map((f) => f.requests)])
    rows.push(["attempts recorded", ...figures.map((f) => f.attempts)])
    for (const kind of RECORDED) rows.push([`  recorded ${kind}`, ...figures.map((f) => f.attemptKinds[kind] ?? 0)])
    rows.push(["SUCCESS deliveries", ...figures.map((f) => f.succeeded)])
    rows.push(["most tries, one delivery", ...figures.map((f) => f.maxTriesForOnePair)])
    rows.push(["overlaps", ...figures.map((f) => f.overlaps)])
    rows.push(["longest stored body (bytes)", ...figures.map((f) => f.longestStoredBodyBytes)])
    rows.push(["invariant checks passed", ...figures.map((f) => f.invariantChecks ?? 0)])
    console.log(table(rows))
  }
  if (code !== 0) {
    console.error(`chaos: the test failed (exit ${code})`)
    process.exitCode = 1
  }
}
