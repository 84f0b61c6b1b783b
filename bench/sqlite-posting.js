// `npm run bench -- sqlite-posting [--seconds=4] [--runs=3] [--group=1,16] [--statements] [--set-based=merged] [--drop=NAME,…] [--frames] [--lane [--batch=100]] [--against=<repository root>]`
//
// The database's work per transfer on SQLite (issue 46 item 3; docs/operations.md#the-performance-budget),
// measured without HTTP, the ledger or Effect: the store's synchronous posting
// (store-sqlite/src/SqlitePosting.ts, `postTransferSync`, what a single `POST /v1/transfers`
// runs under the write lock) called in a loop on one connection of the platform's schema after
// every migration, beside the lean baseline's transaction of the same rows
// (support/leanLedger.js: 7 tables, primary keys only). The postings are the ledger's own
// (`transferPosting` of @issuing/core: a book transfer between two of 64 funded wallets, its new
// transaction, 4 entries, 4 balance deltas, 3 events and 2 balance.updated), made before the timed
// loop. Both sides run with the platform's pragmas (WAL, synchronous = FULL).
//
// --frames: the WAL frames each transfer of ours (and of lean) wrote over the window (the pages its commits
// changed, written and fsynced), by the table or index each page belongs to (the dbstat table),
// the WAL emptied before the window and not checkpointed during it.
//
// --lane: instead, a batch's way through the writer thread (store-sqlite/src/ThreadLane.ts) taken
// apart, batches of --batch (100) one job each: the lane's planning on the main thread (`planJob`:
// the decision, the rows, the counts, the statements), the hand-off (`postMessage`'s structured
// clone) and the thread's work (the clone read back, the statements, the commit), as CPU per
// transfer of the main thread and of the writer thread (/proc, per thread), one job at a time so
// neither waits on the other's CPU. The postings are made before the window, as above.
//
// --group=N: N transfers per BEGIN IMMEDIATE … COMMIT, each of ours in a savepoint of it, as the
// write lane's group commit runs them (1: one commit, one fsync, per transfer, as lean's server
// writes). Figures: transfers per second and the process's CPU (user + system) per transfer over
// the window, ours over lean. --statements: after each run of ours, the CPU time inside each statement
// text per transfer (its triggers included), measured around every `run`/`get` (a separate pass:
// the timing costs). --against: the same measurement of another build of the repository (its
// packages' dist), alternated with this one: ours, theirs, lean, per run. --drop=NAME,…: after each
// of ours, the same again with those indexes or triggers dropped from its database (what they
// cost the posting; docs/decisions.md, "SQLite: what the last round cost").
import Database from "better-sqlite3"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { Effect } from "effect"
import { v7 as uuidv7 } from "uuid"
import { option } from "./support/common.js"
import { leanSqlite, leanSqlitePosting, prepareLean } from "./support/leanLedger.js"
import { fundedWallets } from "./support/wallets.js"

const WALLETS = 64
const FUNDING_MINOR = 1_000_000_000_000
const here = import.meta.dirname

const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")

/** A build's modules: this repository's, or another checkout's dist (`--against`). */
export const buildOf = async (root) => {
  const load = (relative) => import(pathToFileURL(path.join(root, relative)).href)
  const [http, core, posting, newTransfers, threadPlan, writerThread] = await Promise.all([
    load("packages/http/dist/index.js"),
    load("packages/core/dist/index.js"),
    load("packages/store-sqlite/dist/SqlitePosting.js"),
    load("packages/store-sqlite/dist/NewTransfers.js"),
    load("packages/store-sqlite/dist/ThreadPlan.js"),
    load("packages/store-sqlite/dist/WriterThread.js")
  ])
  return { root, http, core, posting, newTransfers, threadPlan, writerThread }
}

const pick = (accounts) => {
  const from = Math.floor(Math.random() * accounts.length)
  let to = Math.floor(Math.random() * (accounts.length - 1))
  if (to >= from) to += 1
  return [accounts[from], accounts[to]]
}

/** A migrated file of `build`'s schema with 64 funded wallets: the program and its accounts as the ledger reads them. */
const prepareOurs = async (build, filename) => {
  const instance = await build.http.createIssuing({
    store: build.http.storeFor({ kind: "sqlite", filename }),
    vaultKeys: [crypto.randomBytes(32)],
    background: false,
    log: null
  })
  try {
    const org = await instance.runtime.runPromise(Effect.flatMap(build.core.Access, (access) => access.createOrganization("posting")))
    await fundedWallets(instance, org.program_id, WALLETS, FUNDING_MINOR)
    return org.program_id
  } finally {
    await instance.dispose()
  }
}

/** The platform's connection settings (store-sqlite/src/SqliteClient.ts, `openDatabase`). */
const openOurs = (filename) => {
  const db = new Database(filename)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = FULL")
  db.pragma("foreign_keys = ON")
  db.pragma("temp_store = MEMORY")
  db.pragma("wal_autocheckpoint = 4000")
  return db
}

/** Every statement's time per SQL text, when `timings` is given. */
const connectionOf = (db, timings) => {
  const statements = new Map()
  const timed = (sql, statement) => {
    const wrap =
      (method) =>
      (...params) => {
        const t0 = process.cpuUsage()
        try {
          return statement[method](...params)
        } finally {
          const { user, system } = process.cpuUsage(t0)
          const entry = timings.get(sql) ?? { ns: 0n, calls: 0 }
          entry.ns += BigInt((user + system) * 1000)
          entry.calls += 1
          timings.set(sql, entry)
        }
      }
    return { run: wrap("run"), get: wrap("get"), all: wrap("all") }
  }
  return {
    prepare: (sql) => {
      let statement = statements.get(sql)
      if (statement === undefined) {
        statement = timings === undefined ? db.prepare(sql) : timed(sql, db.prepare(sql))
        statements.set(sql, statement)
      }
      return statement
    }
  }
}

/** `count` postings of `build`'s ledger: book transfers between random pairs of the program's wallets. */
const postingsOf = (build, db, programId, count) => {
  const accounts = db
    .prepare(
      "SELECT id, program_id, wallet_id, kind, currency, created_at FROM issuing_financial_accounts WHERE program_id = ? AND kind = 'wallet'"
    )
    .all(programId)
    .map((row) => ({ ...row, object: "financial_account" }))
  return Array.from({ length: count }, () => {
    const [from, to] = pick(accounts)
    const order = {
      rail: "book",
      amount: 1 + Math.floor(Math.random() * 100),
      currency: "USD",
      from_financial_account_id: from.id,
      to_financial_account_id: to.id,
      description: null,
      transaction_id: null,
      card: null
    }
    const prepared = { programId, order, from, to, settlement: null }
    return build.core.transferPosting(prepared, from, to, { _tag: "New" }, new Date().toISOString()).posting
  })
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** Transfers made ready per second of the window (more than a quiet machine posts). */
const READY_PER_SECOND = 15_000

/**
 * Runs `write(i)` for i from `first` in groups of `group` per transaction for `seconds` (or until
 * `last`); transfers/s and CPU ms per transfer.
 */
const loop = (db, seconds, group, first, last, write) => {
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  let done = 0
  const cpu0 = cpuMs()
  const t0 = performance.now()
  const deadline = t0 + seconds * 1000
  while (performance.now() < deadline && first + done + group <= last) {
    begin.run()
    for (let i = 0; i < group; i++) write(first + done++, i)
    commit.run()
  }
  const elapsed = performance.now() - t0
  return { perSecond: done / (elapsed / 1000), cpuMs: (cpuMs() - cpu0) / done, done }
}

/**
 * Runs `measure` (a timed loop's result) with the WAL emptied first and no checkpoint meanwhile,
 * then counts the frames it wrote (one per page a commit changed) per transfer, by the b-tree each
 * page belongs to (dbstat): the pages a commit writes and fsyncs.
 */
const withFrames = (db, filename, measure) => {
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.pragma("wal_autocheckpoint = 0")
  const result = measure()
  const pageSize = db.pragma("page_size", { simple: true })
  const wal = fs.readFileSync(`${filename}-wal`)
  const owner = new Map(
    db
      .prepare("SELECT pageno, name FROM dbstat")
      .all()
      .map((row) => [row.pageno, row.name])
  )
  const byTree = new Map()
  let total = 0
  // A frame: a 24-byte header (its page number first) and the page; the WAL's header is 32 bytes.
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const tree = owner.get(wal.readUInt32BE(at)) ?? "(freed since)"
    byTree.set(tree, (byTree.get(tree) ?? 0) + 1)
    total += 1
  }
  const perTransfer = [...byTree].map(([tree, n]) => [tree, n / result.done]).sort((a, b) => b[1] - a[1])
  return { ...result, frames: { perTransfer: total / result.done, byTree: perTransfer } }
}

export const measureOurs = async (build, dir, name, { seconds, group, statements, setBased, frames = false, drop = [] }) => {
  const filename = path.join(dir, `${name}-${group}.db`)
  const programId = await prepareOurs(build, filename)
  const db = openOurs(filename)
  for (const name of drop) {
    const found = db.prepare("SELECT type FROM sqlite_master WHERE name = ?").get(name)
    if (found === undefined) throw new Error(`--drop: no trigger or index ${name}`)
    db.exec(`DROP ${found.type.toUpperCase()} ${name}`)
  }
  try {
    const timings = statements ? new Map() : undefined
    const connection = connectionOf(db, timings)
    // Each of ours in a savepoint, as better-sqlite3 runs a nested transaction function (SqliteClient.ts, SyncSql).
    const post = db.transaction((posting) => build.posting.postTransferSync(connection, posting))
    // Enough postings for the window at a quiet machine's rate, made before it.
    const warm = 2000
    const postings = postingsOf(build, db, programId, warm + Math.ceil(seconds * READY_PER_SECOND))
    // Warm-up: statements prepared, pages cached.
    if (setBased) {
      // The group's postings as one set-based write (NewTransfers.ts: what a batch runs), each refused alone.
      const merged = setBased === "merged"
      const write = (i, inGroup) => {
        if (merged && inGroup !== 0) return
        for (const outcome of build.newTransfers.postNewTransfersSync(connection, postings.slice(i, merged ? i + group : i + 1), false))
          if (!outcome.posted) throw new Error(`not posted: ${outcome.refusal}`)
      }
      loop(db, 60, group, 0, warm, write)
      if (timings !== undefined) timings.clear()
      const timed = () => loop(db, seconds, group, warm, postings.length, write)
      return { ...(frames ? withFrames(db, filename, timed) : timed()), timings }
    }
    loop(db, 60, group, 0, warm, (i) => post(postings[i]))
    if (timings !== undefined) timings.clear()
    const timed = () =>
      loop(db, seconds, group, warm, postings.length, (i) => {
        const outcome = post(postings[i])
        if (!outcome.posted) throw new Error(`not posted: ${outcome.refusal}`)
      })
    return { ...(frames ? withFrames(db, filename, timed) : timed()), timings }
  } finally {
    db.close()
  }
}

const TICK_MS = 10

/** CPU ms so far of each thread of this process (/proc; CLK_TCK is 100), by thread id. */
const threadCpuMs = () =>
  new Map(
    fs.readdirSync(`/proc/${process.pid}/task`).map((task) => {
      const stat = fs.readFileSync(`/proc/${process.pid}/task/${task}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return [task, (Number(fields[11]) + Number(fields[12])) * TICK_MS]
    })
  )

/**
 * A batch's way through the writer thread, one job at a time (--lane): CPU per transfer of the
 * lane's planning, of the main thread in all (planning, hand-off, answer) and of the writer thread.
 */
export const measureLane = async (build, dir, name, { seconds, batch }) => {
  const filename = path.join(dir, `${name}.db`)
  const programId = await prepareOurs(build, filename)
  const db = openOurs(filename)
  const thread = build.writerThread.makeWriterThread({ filename, synchronous: "FULL" })
  try {
    const postings = postingsOf(build, db, programId, Math.ceil((seconds + 2) * READY_PER_SECOND))
    const batches = []
    for (let i = 0; i + batch <= postings.length; i += batch) batches.push(postings.slice(i, i + batch))
    let prediction = build.threadPlan.emptyPrediction
    const totals = db.prepare(build.newTransfers.TOTALS_OF)
    /** Plans and writes one job; the CPU ms of its planning (the thread is idle meanwhile). */
    const writeJob = async (postingsOfJob) => {
      const cpu0 = cpuMs()
      const requests = [{ postings: postingsOfJob, allOrNothing: false, alone: false }]
      const unseen = build.threadPlan.accountsToRead(prediction, requests)
      const planned = build.threadPlan.planJob(prediction, requests, unseen.length === 0 ? [] : totals.all(JSON.stringify(unseen)))
      prediction = planned.next
      const planMs = cpuMs() - cpu0
      const answer = await Effect.runPromise(Effect.flatten(thread.send({ ...planned.job, busyTimeoutMs: 5000 })))
      if (answer._tag !== "Committed") throw new Error("the job's guard read other rows")
      return planMs
    }
    // Warm-up: the thread started, its statements prepared.
    let next = 0
    for (; next < 20; next++) await writeJob(batches[next])
    const before = threadCpuMs()
    const main = String(process.pid)
    let planMs = 0
    let done = 0
    const t0 = performance.now()
    while (performance.now() < t0 + seconds * 1000 && next < batches.length) {
      planMs += await writeJob(batches[next++])
      done += batch
    }
    const elapsed = performance.now() - t0
    const after = threadCpuMs()
    const spent = [...after].map(([task, ms]) => [task, ms - (before.get(task) ?? 0)])
    const others = spent.filter(([task]) => task !== main).sort((a, b) => b[1] - a[1])
    return {
      perSecond: done / (elapsed / 1000),
      planMs: planMs / done,
      mainMs: (spent.find(([task]) => task === main)[1] - planMs) / done,
      writerMs: others[0][1] / done,
      restMs: others.slice(1).reduce((sum, [, ms]) => sum + ms, 0) / done
    }
  } finally {
    await Effect.runPromise(thread.close)
    db.close()
  }
}

export const measureLean = async (dir, name, { seconds, group, frames = false }) => {
  const filename = path.join(dir, `${name}-${group}.db`)
  const programId = crypto.randomUUID()
  const accounts = await prepareLean({ kind: "sqlite", filename }, programId, WALLETS)
  const db = leanSqlite(filename)
  // leanLedger.js's one transaction's statements, run here under the loop's BEGIN … COMMIT.
  const post = leanSqlitePosting(db)
  // Each transfer's values made before the window, as ours are.
  const warm = 2000
  const orders = Array.from({ length: warm + Math.ceil(seconds * READY_PER_SECOND) }, () => {
    const [from, to] = pick(accounts)
    const amount = 1 + Math.floor(Math.random() * 100)
    const ids = Array.from({ length: 6 }, () => uuidv7())
    return { from, to, amount, ids, now: new Date().toISOString() }
  })
  const write = (i) => {
    const { from, to, amount, ids, now } = orders[i]
    post(programId, from, to, amount, ids, now)
  }
  try {
    loop(db, 60, group, 0, warm, write)
    const timed = () => loop(db, seconds, group, warm, orders.length, write)
    return frames ? withFrames(db, filename, timed) : timed()
  } finally {
    db.close()
  }
}

export const printTimings = (label, timings, transfers) => {
  const rows = [...timings.entries()].sort((a, b) => Number(b[1].ns - a[1].ns))
  const total = rows.reduce((sum, [, t]) => sum + Number(t.ns), 0)
  console.log(`  ${label}: ${(total / 1e6 / transfers).toFixed(3)} ms per transfer inside statements`)
  for (const [sql, t] of rows)
    console.log(
      `    ${(Number(t.ns) / 1e6 / transfers).toFixed(4).padStart(8)} ms ${(t.calls / transfers).toFixed(2).padStart(5)}×  ${sql.replace(/\s+/g, " ").slice(0, 110)}`
    )
}

export async function run(args) {
  const seconds = Number(option(args, "seconds", "4"))
  const runs = Number(option(args, "runs", "3"))
  const groups = option(args, "group", "1,16").split(",").map(Number)
  const statements = args.includes("--statements")
  const setBased = option(args, "set-based", undefined)
  // --frames: the WAL frames (pages written per commit) per transfer of ours, by b-tree.
  const frames = args.includes("--frames")
  const against = option(args, "against", undefined)
  const drop = option(args, "drop", "")
    .split(",")
    .filter((name) => name !== "")
  const builds = [await buildOf(path.resolve(here, ".."))]
  if (against !== undefined) builds.push(await buildOf(path.resolve(against)))
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-sqlite-posting-"))
  if (args.includes("--lane")) {
    const batch = Number(option(args, "batch", "100"))
    console.log(
      `sqlite-posting --lane: batches of ${batch} through the writer thread, one job at a time, ${seconds} s each, ${runs} alternated runs; ${os.cpus().length} cores; builds: ${builds.map((b) => b.root).join(", ")}`
    )
    try {
      for (let run = 1; run <= runs; run++) {
        for (const [index, build] of builds.entries()) {
          const r = await measureLane(build, dir, `lane${index}-${run}`, { seconds, batch })
          console.log(
            `  run ${run} ${(index === 0 ? "ours" : "against").padEnd(8)} ${Math.round(r.perSecond).toString().padStart(6)}/s  CPU ms per transfer: planning ${r.planMs.toFixed(4)}, main thread besides ${r.mainMs.toFixed(4)}, writer thread ${r.writerMs.toFixed(4)}, other threads ${r.restMs.toFixed(4)}  (load ${loadAverage()})`
          )
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
    return
  }
  console.log(
    `sqlite-posting: postTransferSync vs lean on one SQLite connection, ${seconds} s each, ${runs} alternated runs, groups ${groups.join(", ")}; ${os.cpus().length} cores; builds: ${builds.map((b) => b.root).join(", ")}`
  )
  const ratios = new Map()
  try {
    for (let run = 1; run <= runs; run++) {
      for (const group of groups) {
        const results = []
        for (const [index, build] of builds.entries()) {
          const result = await measureOurs(build, dir, `ours${index}-${run}`, { seconds, group, statements: false, frames })
          results.push({ label: index === 0 ? "ours" : "against", result, load: loadAverage() })
          if (setBased) {
            const set = await measureOurs(build, dir, `set${index}-${run}`, { seconds, group, statements: false, setBased, frames })
            results.push({ label: index === 0 ? "ours set" : "against set", result: set, load: loadAverage() })
          }
          if (drop.length > 0) {
            const without = await measureOurs(build, dir, `drop${index}-${run}`, { seconds, group, statements: false, setBased, drop })
            results.push({
              label: `${index === 0 ? "ours" : "against"}${setBased ? " set" : ""} −drop`,
              result: without,
              load: loadAverage()
            })
          }
        }
        const lean = await measureLean(dir, `lean-${run}`, { seconds, group, frames })
        results.push({ label: "lean", result: lean, load: loadAverage() })
        console.log(`run ${run}, ${group} per commit:`)
        for (const { label, result, load } of results) {
          const ratio =
            label === "lean"
              ? ""
              : `  ÷ lean: rate ${(result.perSecond / lean.perSecond).toFixed(2)}, CPU ${(result.cpuMs / lean.cpuMs).toFixed(2)}×`
          console.log(
            `  ${label.padEnd(15)} ${Math.round(result.perSecond).toString().padStart(6)}/s  CPU ${result.cpuMs.toFixed(3)} ms/transfer${ratio}  (load ${load})`
          )
          if (result.frames !== undefined)
            console.log(
              `    WAL frames per transfer ${result.frames.perTransfer.toFixed(2)}: ${result.frames.byTree
                .slice(0, 12)
                .map(([tree, n]) => `${tree} ${n.toFixed(2)}`)
                .join(", ")}`
            )
          if (label !== "lean") {
            const key = `${label} ${group}`
            ratios.set(key, [...(ratios.get(key) ?? []), result.cpuMs / lean.cpuMs])
          }
        }
        if (statements) {
          for (const [index, build] of builds.entries()) {
            const timed = await measureOurs(build, dir, `timed${index}-${run}`, { seconds, group, statements: true })
            printTimings(index === 0 ? "ours" : "against", timed.timings, timed.done)
            if (setBased) {
              const set = await measureOurs(build, dir, `timedset${index}-${run}`, { seconds, group, statements: true, setBased })
              printTimings(index === 0 ? "ours set" : "against set", set.timings, set.done)
            }
            if (drop.length > 0) {
              const without = await measureOurs(build, dir, `timeddrop${index}-${run}`, {
                seconds,
                group,
                statements: true,
                setBased,
                drop
              })
              printTimings(`${index === 0 ? "ours" : "against"}${setBased ? " set" : ""} −drop`, without.timings, without.done)
            }
          }
        }
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  for (const [key, values] of ratios)
    console.log(`${key} per commit, CPU per transfer ÷ lean: ${values.map((v) => v.toFixed(2)).join(", ")}`)
}
