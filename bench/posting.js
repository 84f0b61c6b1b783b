// `npm run bench -- posting [--seconds=5] [--warmup=3] [--connections=16] [--runs=3] [--statements] [--drop=PART[+PART…],…] [--paired [--rounds=20] [--calls=150] [--against=<dist/index.js>]] [--batch=100 [--against=<dist/index.js>]]`
//
// The database's work per transfer on PostgreSQL (issue 46 item 2; docs/operations.md#volume),
// measured without HTTP or the API node: posting calls per second on PostgreSQL alone, on
// `--connections` connections (16), beside the lean function of the same rows
// (support/leanLedger.js: `lean_post_transfer`, 7 tables with primary keys only), and the CPU time
// every process of the embedded server spent per transfer after a warm-up (its postmaster and every process it
// started: the backends, the WAL writer, the checkpointer, autovacuum — /proc/<pid>/stat), ours
// over lean. Beside the CPU, which a shared machine's load moves, the work that load does not
// move: the WAL the server wrote per transfer (pg_current_wal_lsn over the window, every database's
// and process's) and the shared buffers the database's backends read or hit per transfer
// (pg_stat_database blks_hit + blks_read, flushed by each backend within a second of its commit).
//
// Ours: `issuing_post_transfer(p_posting jsonb, NULL)` — the one statement a single
// `POST /v1/transfers` posts with (store-pg/src/PgPosting.ts) — called with the posting record the
// product sends for a book transfer between two funded wallets (store-pg/src/PostingRecord.ts: its
// every field; the events' data the objects the API shows, as JSON text), each in its own
// transaction (autocommit), on the platform's schema after every migration. The wallets are made
// and funded through the platform itself. Both sides pick the pair of accounts the same way, among
// 64. `--runs` alternates ours and lean that many times, on fresh databases of one server, so the
// ratio of each run is of one time window; the load average is printed with each.
// --statements loads pg_stat_statements (nested statements too) and prints, after each run of ours,
// the statements that took the most execution time per transfer (a function's statements beside
// the call that ran them, so their times overlap); it costs every statement, so read the CPU
// figures of runs without it.
// --drop=PART,…: after each run of ours, ours again once per PART on a database of the same schema
// with that part of the write taken out (`a+b` takes out both at once), so each part's cost is
// ours whole less ours without it, in one time window (docs/operations.md, "The database's work
// per transfer (PostgreSQL)"). The parts (DROP_PARTS below): the counts (the upsert and the
// counting triggers it bypasses), the counting triggers alone, the counts' periods, the events'
// two list indexes, the transfers' four by-account indexes, their and the transactions' four
// by-updated_at indexes, the two balance.updated events, the tag trigger, the fan-out, the foreign
// keys; and a rewrite measured the same way (fan-out-inline). A counterfactual: every list, total
// and webhook needs its part.
// --paired [--rounds=20] [--calls=150] [--drop=…]: ours whole, without each part, and lean, each
// on one connection, alternated every turn of `calls` postings, the backend's user CPU per posting
// (runPaired): the figure a shared machine's load moves least; `--against=<another build's
// @issuing/http dist/index.js>` adds that build's posting as one more side.
//
// --batch=100: batches instead (issue 46 item 4; docs/operations.md#the-performance-budget): the
// ledger's own `postTransfers` of that many book transfers among the 64 wallets, called in this
// process through the platform's services (what `POST /v1/transfers/batch` runs, without HTTP),
// from `--connections` loops (default 4), and per batched transfer: every PostgreSQL process's
// CPU, this process's CPU (the node side of the store: deciding, building and sending the
// document, reading the answer; the bench's own requests too), WAL bytes and buffers. With
// `--against=<another build's @issuing/http dist/index.js>` that build is measured the same way
// right after this one, run by run (two databases of one server); `--statements` prints each
// build's statements per batch.
import { Access } from "@issuing/core"
import { createIssuing, storeFor } from "@issuing/http"
import { countsOf } from "@issuing/store-pg"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { v7 as uuidv7 } from "uuid"
import { option, percentile } from "./support/common.js"
import { leanPostgresWrite, leanWriter, prepareLean } from "./support/leanLedger.js"
import { benchPool, createDatabase, resetStatements, startPostgres, statementsOf, withPgClient } from "./support/postgres.js"
import { fundedWallets } from "./support/wallets.js"

const WALLETS = 64
const FUNDING_MINOR = 1_000_000_000_000
const TICKS_PER_SECOND = 100

const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")

/** The CPU time so far (ms) of the embedded server in `dataDir`: its postmaster and every process it started. */
const serverCpuMs = (dataDir) => {
  const postmaster = Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0])
  let total = 0
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      // Fields 4 (ppid), 14 and 15 (utime, stime) of stat(5), counted from the state (field 3) here.
      if (Number(entry) === postmaster || Number(fields[1]) === postmaster)
        total += ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
    } catch {
      // A process that ended meanwhile.
    }
  }
  return total
}

const pick = (accounts) => {
  const from = Math.floor(Math.random() * accounts.length)
  let to = Math.floor(Math.random() * (accounts.length - 1))
  if (to >= from) to += 1
  return [accounts[from], accounts[to]]
}

/**
 * The posting record of a book transfer of `amount` from `from` to `to` (both wallets), as
 * PostingRecord.ts builds it for a new transfer that settles at once: a new transaction, its
 * transfer and book transfer, the 4 entries, the deltas, transfer.created, transaction.updated and
 * transfer.settled (each its object as the API shows it), and one balance.updated per wallet.
 */
const postingRecord = (programId, from, to, amount) => {
  const now = new Date().toISOString()
  const transaction = {
    id: uuidv7(),
    object: "transaction",
    program_id: programId,
    status: "SETTLED",
    amount,
    currency: "USD",
    card_id: null,
    decline_reason: null,
    mcc: null,
    merchant_name: null,
    merchant: null,
    network_transaction_id: null,
    authorized_amount: null,
    pending_amount: null,
    settled_amount: null,
    expires_at: null,
    card_events: [],
    request_history: [],
    created_at: now,
    updated_at: now
  }
  const transfer = {
    id: uuidv7(),
    object: "transfer",
    program_id: programId,
    transaction_id: transaction.id,
    payment_rail: "book",
    amount,
    currency: "USD",
    from_financial_account_id: from,
    to_financial_account_id: to,
    status: "SETTLED",
    description: null,
    metadata: {},
    return_code: null,
    return_reason: null,
    created_at: now,
    updated_at: now
  }
  const event = (type, object) => ({ id: uuidv7(), type, data: JSON.stringify(object) })
  const record = {
    program_id: programId,
    source: from,
    target: to,
    check_funds: true,
    amount,
    currency: "USD",
    now,
    active_card: null,
    transaction_write: "insert",
    transaction_id: transaction.id,
    transaction_status: "SETTLED",
    transaction_created_at: now,
    card_id: null,
    mcc: null,
    merchant_name: null,
    transfer_id: transfer.id,
    rail: "book",
    transfer_status: "SETTLED",
    description: null,
    metadata: "{}",
    book_transfer_id: uuidv7(),
    entries: [
      { account: from, book: "principal", entry_type: "DEBIT", amount },
      { account: from, book: "cash", entry_type: "CREDIT", amount },
      { account: to, book: "cash", entry_type: "DEBIT", amount },
      { account: to, book: "principal", entry_type: "CREDIT", amount }
    ],
    deltas: [
      { account: from, book: "principal", debits: amount, credits: 0, pending: 0 },
      { account: from, book: "cash", debits: 0, credits: amount, pending: 0 },
      { account: to, book: "cash", debits: amount, credits: 0, pending: 0 },
      { account: to, book: "principal", debits: 0, credits: amount, pending: 0 }
    ],
    events: [event("transfer.created", transfer), event("transaction.updated", transaction), event("transfer.settled", transfer)],
    balance_events: [
      { id: uuidv7(), account: from },
      { id: uuidv7(), account: to }
    ]
  }
  return { ...record, counts: countsOf(record) }
}

/** `sql` with `pattern` (which must match) replaced by `by`. */
const cut = (sql, pattern, by, part) => {
  if (!pattern.test(sql)) throw new Error(`--drop=${part}: issuing_post_transfer no longer has what it takes out`)
  return sql.replace(pattern, by)
}

/**
 * What each `--drop` part takes out of ours: statements run on the bench database (indexes,
 * triggers, constraints dropped), a rewrite of `issuing_post_transfer`'s text, or of the record sent.
 */
const DROP_PARTS = {
  // The posting's count upsert (34 rows for a book transfer) and the counting triggers it bypasses.
  counts: {
    sql: [
      "DROP TRIGGER IF EXISTS issuing_count_transactions_insert ON issuing_transactions",
      "DROP TRIGGER IF EXISTS issuing_count_transfers_insert ON issuing_transfers",
      "DROP TRIGGER IF EXISTS issuing_count_book_entries_insert ON issuing_book_entries",
      "DROP TRIGGER IF EXISTS issuing_count_events_insert ON issuing_events"
    ],
    fn: (sql) => cut(sql, /INSERT INTO issuing_list_counts[\s\S]*?excluded\.n;/, "", "counts")
  },
  // The counting triggers alone (the posting sets issuing.posting_counted, so they only test their
  // WHEN and keep the statement's new rows in a transition table).
  "count-triggers": {
    sql: [
      "DROP TRIGGER IF EXISTS issuing_count_transactions_insert ON issuing_transactions",
      "DROP TRIGGER IF EXISTS issuing_count_transfers_insert ON issuing_transfers",
      "DROP TRIGGER IF EXISTS issuing_count_book_entries_insert ON issuing_book_entries",
      "DROP TRIGGER IF EXISTS issuing_count_events_insert ON issuing_events"
    ]
  },
  // The counts' month, day and hour rows (migration 0841): the plain counts alone.
  periods: { record: (record) => ({ ...record, counts: record.counts.filter((count) => !count.list.includes("@")) }) },
  // A rewrite too: the fan-out's insert written in the posting, not a plpgsql call over arrays.
  "fan-out-inline": {
    fn: (sql) =>
      cut(
        sql,
        /IF v_events \+ v_balance_events > 0 THEN\s*PERFORM issuing_webhook_fan_out_events[\s\S]*?END IF;/,
        `INSERT INTO issuing_webhook_deliveries
          (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
        SELECT e.id || ':' || et.subscription_id, v_program_id, et.subscription_id, e.id, 0, v_now, NULL, v_now
        FROM (SELECT x.id, x.type FROM jsonb_to_recordset(p_posting->'events') AS x(id text, type text)
              UNION ALL
              SELECT x.id, 'balance.updated' FROM jsonb_to_recordset(p_posting->'balance_events') AS x(id text)) e
        JOIN issuing_webhook_event_types et ON et.program_id = v_program_id AND et.event_type = e.type
        JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
        WHERE s.disabled = false
          AND (s.tag IS NULL OR EXISTS (SELECT 1 FROM issuing_event_tags t WHERE t.event_id = e.id AND t.tag = s.tag));
      IF FOUND THEN
        IF p_channel IS NULL THEN v_set := set_config('issuing.deliveries_queued', 'yes', true);
        ELSE PERFORM pg_notify(p_channel, 'due');
        END IF;
      END IF;`,
        "fan-out-inline"
      )
  },
  "event-indexes": { sql: ["DROP INDEX IF EXISTS issuing_events_by_program_type", "DROP INDEX issuing_events_by_program"] },
  "account-indexes": {
    sql: [
      "DROP INDEX IF EXISTS issuing_transfers_by_from_status_rail",
      "DROP INDEX IF EXISTS issuing_transfers_by_from_status_rail_update",
      "DROP INDEX IF EXISTS issuing_transfers_by_to_status_rail",
      "DROP INDEX IF EXISTS issuing_transfers_by_to_status_rail_update"
    ]
  },
  "update-indexes": {
    sql: [
      "DROP INDEX IF EXISTS issuing_transfers_by_status_rail_update",
      "DROP INDEX IF EXISTS issuing_transfers_by_from_status_rail_update",
      "DROP INDEX IF EXISTS issuing_transfers_by_to_status_rail_update",
      "DROP INDEX IF EXISTS issuing_transactions_by_status_update"
    ]
  },
  // The two balance.updated events, their counts and their fan-out: the record sent without them.
  "balance-updated": {
    record: (record) => {
      const { counts: _, ...fields } = { ...record, balance_events: [] }
      return { ...fields, counts: countsOf(fields) }
    }
  },
  "tag-trigger": { sql: ["DROP TRIGGER IF EXISTS issuing_tag_events ON issuing_events"] },
  "fan-out": {
    fn: (sql) => cut(sql, /IF v_events \+ v_balance_events > 0 THEN\s*PERFORM issuing_webhook_fan_out_events[\s\S]*?END IF;/, "", "fan-out")
  },
  "foreign-keys": {
    sql: [
      `DO $$ DECLARE c record; BEGIN
         FOR c IN SELECT conrelid::regclass AS t, conname FROM pg_constraint
                  WHERE contype = 'f' AND conrelid::regclass::text IN
                    ('issuing_transactions', 'issuing_transfers', 'issuing_book_transfers', 'issuing_book_entries', 'issuing_events', 'issuing_balances')
         LOOP EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', c.t, c.conname); END LOOP;
       END $$`
    ]
  }
}

/** Takes the parts named in `drop` (`a+b`) out of the database at `url`; resolves with how to change each record sent. */
const dropParts = async (url, drop) => {
  const parts = drop.split("+").map((name) => {
    const part = DROP_PARTS[name]
    if (part === undefined) throw new Error(`--drop: no part ${name} (${Object.keys(DROP_PARTS).join(", ")})`)
    return part
  })
  await withPgClient(url, async (client) => {
    for (const part of parts) for (const statement of part.sql ?? []) await client.query(statement)
    const rewrites = parts.filter((part) => part.fn !== undefined)
    if (rewrites.length > 0) {
      const { rows } = await client.query("SELECT pg_get_functiondef('issuing_post_transfer'::regproc) AS sql")
      await client.query(rewrites.reduce((sql, part) => part.fn(sql), rows[0].sql))
    }
  })
  return parts.reduce(
    (change, part) => (part.record === undefined ? change : (record) => part.record(change(record))),
    (record) => record
  )
}

/**
 * Our schema, migrated by the platform (this build's, or `build`'s: buildOf), with `WALLETS`
 * funded wallets: `{ programId, accounts }`.
 */
const prepareOurs = async (url, build = undefined) => {
  const http = build?.http ?? { createIssuing, storeFor }
  const instance = await http.createIssuing({
    store: http.storeFor({ kind: "postgres", url }),
    vaultKeys: [crypto.randomBytes(32)],
    background: false,
    log: null
  })
  try {
    const run = (effect) => instance.runtime.runPromise(effect)
    const org =
      build === undefined
        ? await run(Effect.flatMap(Access, (access) => access.createOrganization("posting")))
        : await run(build.effect.Effect.flatMap(build.core.Access, (access) => access.createOrganization("posting")))
    return { programId: org.program_id, accounts: await fundedWallets(instance, org.program_id, WALLETS, FUNDING_MINOR, build) }
  } finally {
    await instance.dispose()
  }
}

/** Rows inserted, updated and HOT-updated so far in each table of the database at `url`. */
const tableWrites = (url) =>
  withPgClient(url, async (client) => {
    const { rows } = await client.query(
      "SELECT relname, n_tup_ins::float8 AS ins, n_tup_upd::float8 AS upd, n_tup_hot_upd::float8 AS hot FROM pg_stat_user_tables"
    )
    return new Map(rows.map((row) => [row.relname, row]))
  })

/** The server's WAL position (bytes) and database `name`'s buffer accesses so far. */
const workSoFar = (adminUrl, name) =>
  withPgClient(adminUrl, async (client) => {
    const { rows } = await client.query(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal,
              (SELECT blks_hit + blks_read FROM pg_stat_database WHERE datname = $1) AS blocks`,
      [name]
    )
    return { wal: Number(rows[0].wal), blocks: Number(rows[0].blocks) }
  })

/**
 * Calls `write(from, to, amount)` from `connections` loops for `seconds` (after `warmup` seconds
 * unmeasured: each connection plans its statements, plpgsql's included, on its first calls);
 * resolves with calls/s, p50/p99 and the server's CPU ms per call.
 */
const drive = async (dataDir, accounts, { connections, seconds, warmup, onWarm, work }, write) => {
  const loop = async (deadline, done) => {
    while (performance.now() < deadline) {
      const [from, to] = pick(accounts)
      const t0 = performance.now()
      await write(from, to, 1 + Math.floor(Math.random() * 100))
      done(performance.now() - t0)
    }
  }
  const warm = performance.now() + warmup * 1000
  await Promise.all(Array.from({ length: connections }, () => loop(warm, () => {})))
  if (onWarm !== undefined) await onWarm()
  const latencies = []
  const workBefore = await work()
  const cpuBefore = serverCpuMs(dataDir)
  const started = performance.now()
  const deadline = started + seconds * 1000
  await Promise.all(Array.from({ length: connections }, () => loop(deadline, (ms) => latencies.push(ms))))
  const elapsedMs = performance.now() - started
  const cpuMs = serverCpuMs(dataDir) - cpuBefore
  // The backends' statistics reach pg_stat_database within a second of their last commit.
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const workAfter = await work()
  const sorted = Float64Array.from(latencies).sort()
  return {
    perSecond: latencies.length / (elapsedMs / 1000),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    cpuMsPerCall: cpuMs / latencies.length,
    walPerCall: (workAfter.wal - workBefore.wal) / latencies.length,
    blocksPerCall: (workAfter.blocks - workBefore.blocks) / latencies.length
  }
}

const ours = async (adminUrl, dataDir, run, settings, drop = undefined) => {
  const name = `issuing_bench_posting_ours_${run}${drop === undefined ? "" : `_drop_${drop.replace(/[^a-z]+/g, "_")}`}`
  const url = await createDatabase(adminUrl, name)
  const { programId, accounts } = await prepareOurs(url)
  const change = drop === undefined ? (record) => record : await dropParts(url, drop)
  const pool = benchPool(url, settings.connections)
  try {
    let tablesBefore
    const onWarm = settings.statements
      ? async () => {
          await resetStatements(adminUrl)
          tablesBefore = await tableWrites(url)
        }
      : undefined
    const work = () => workSoFar(adminUrl, name)
    const result = await drive(dataDir, accounts, { ...settings, onWarm, work }, async (from, to, amount) => {
      const { rows } = await pool.query("SELECT posted, refusal FROM issuing_post_transfer($1::jsonb, NULL::text)", [
        JSON.stringify(change(postingRecord(programId, from, to, amount)))
      ])
      if (rows[0].posted !== true) throw new Error(`not posted: ${rows[0].refusal}`)
    })
    if (settings.statements) {
      const calls =
        (await statementsOf(adminUrl, name, 40)).find((row) => row.toplevel && /issuing_post_transfer/.test(row.query))?.calls ?? 1
      console.log(`statements of ours per transfer (${calls} calls; nested times are within their caller's)`)
      for (const row of await statementsOf(adminUrl, name, 25))
        console.log(
          `  ${row.toplevel ? "top" : "  n"} ${(row.calls / calls).toFixed(2).padStart(6)} calls ${(row.plans / calls).toFixed(2).padStart(5)} plans ${(row.ms / calls).toFixed(3).padStart(8)} ms ${(row.blocks / calls).toFixed(1).padStart(6)} buffers ${Math.round(
            row.wal / calls
          )
            .toString()
            .padStart(6)} WAL bytes  ${row.query.replace(/\s+/g, " ").slice(0, 120)}`
        )
      // The backends' table statistics reach pg_stat_user_tables within a second of their commit (drive waited).
      const tablesAfter = await tableWrites(url)
      console.log("  rows per transfer by table: inserted, updated (of which HOT)")
      for (const [table, after] of tablesAfter) {
        const before = tablesBefore.get(table) ?? { ins: 0, upd: 0, hot: 0 }
        if (after.ins === before.ins && after.upd === before.upd) continue
        const per = (field) => ((after[field] - before[field]) / calls).toFixed(2)
        console.log(`    ${table.padEnd(28)} ${per("ins").padStart(6)} inserted ${per("upd").padStart(6)} updated (${per("hot")} HOT)`)
      }
    }
    return result
  } finally {
    await pool.end()
  }
}

const lean = async (adminUrl, dataDir, run, settings) => {
  const name = `issuing_bench_posting_lean_${run}`
  const target = { kind: "postgres", url: await createDatabase(adminUrl, name) }
  const programId = crypto.randomUUID()
  const accounts = await prepareLean(target, programId, WALLETS)
  const writer = leanWriter(target, settings.connections)
  try {
    return await drive(dataDir, accounts, { ...settings, work: () => workSoFar(adminUrl, name) }, (from, to, amount) =>
      writer.write(programId, from, to, amount)
    )
  } finally {
    await writer.close()
  }
}

/** The user CPU time so far (ms) of one backend process. */
const backendUserMs = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) * 1000) / TICKS_PER_SECOND
}

/**
 * --paired: ours whole, ours without each `--drop` part and lean, each on its own database with
 * ONE connection (no lock waits: its CPU is the posting's own), called in turn `rounds` times,
 * `calls` postings a turn; per posting, each side's backend user CPU (/proc/<pid>/stat: its system
 * CPU is mostly its commit's WAL write and fsync, which the other processes' disk traffic moves),
 * the server's WAL and its database's buffers over its turns. Alternated every few hundred
 * milliseconds, a shared machine's load falls on every side alike.
 */
const runPaired = async (server, { rounds, calls, drops, against }) => {
  const sides = []
  const variants = [
    { label: "ours" },
    ...drops.map((part) => ({ label: `ours −${part}`, part })),
    ...(against === undefined ? [] : [{ label: "against", build: await buildOf(against) }])
  ]
  try {
    for (const { label, part, build } of variants) {
      const name = `issuing_bench_posting_paired_${label.replace(/[^a-z]+/g, "_")}`
      const url = await createDatabase(server.adminUrl, name)
      const { programId, accounts } = await prepareOurs(url, build)
      const change = part === undefined ? (record) => record : await dropParts(url, part)
      // Never closed while idle: its backend's CPU is read across the rounds.
      const pool = new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 0 })
      pool.on("error", () => {})
      sides.push({
        label,
        name,
        accounts,
        pool,
        close: () => pool.end(),
        write: async (from, to, amount) => {
          const { rows } = await pool.query("SELECT posted, refusal FROM issuing_post_transfer($1::jsonb, NULL::text)", [
            JSON.stringify(change(postingRecord(programId, from, to, amount)))
          ])
          if (rows[0].posted !== true) throw new Error(`not posted: ${rows[0].refusal}`)
        }
      })
    }
    const leanName = "issuing_bench_posting_paired_lean"
    const target = { kind: "postgres", url: await createDatabase(server.adminUrl, leanName) }
    const leanProgram = crypto.randomUUID()
    const leanAccounts = await prepareLean(target, leanProgram, WALLETS)
    const leanPool = new pg.Pool({ connectionString: target.url, max: 1, idleTimeoutMillis: 0 })
    leanPool.on("error", () => {})
    sides.push({
      label: "lean",
      name: leanName,
      accounts: leanAccounts,
      pool: leanPool,
      close: () => leanPool.end(),
      write: (from, to, amount) => leanPostgresWrite(leanPool, leanProgram, from, to, amount)
    })
    for (const side of sides) {
      side.pid = (await side.pool.query("SELECT pg_backend_pid() AS pid")).rows[0].pid
      side.cpu = 0
      side.wal = 0
      side.blocks = 0
      side.done = 0
      // Warm-up: the connection plans its statements (plpgsql's too) and caches the rows.
      for (let i = 0; i < 200; i++) {
        const [from, to] = pick(side.accounts)
        await side.write(from, to, 1 + Math.floor(Math.random() * 100))
      }
    }
    console.log(
      `posting --paired: ${sides.map((side) => side.label).join(", ")}; ${rounds} rounds of ${calls} postings each, one connection (load ${loadAverage()})`
    )
    for (let round = 0; round < rounds; round++) {
      for (const side of sides) {
        const work = await workSoFar(server.adminUrl, side.name)
        const cpu = backendUserMs(side.pid)
        for (let i = 0; i < calls; i++) {
          const [from, to] = pick(side.accounts)
          await side.write(from, to, 1 + Math.floor(Math.random() * 100))
        }
        side.cpu += backendUserMs(side.pid) - cpu
        const after = await workSoFar(server.adminUrl, side.name)
        side.wal += after.wal - work.wal
        side.done += calls
        side.blocksBefore ??= work.blocks
      }
    }
    // The backends' statistics reach pg_stat_database within a second of their last commit.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const whole = sides[0]
    console.log(`load ${loadAverage()}; per posting: the backend's user CPU, the server's WAL, the database's buffers (read or hit)`)
    for (const side of sides) {
      side.blocks = (await workSoFar(server.adminUrl, side.name)).blocks - side.blocksBefore
      const cpu = side.cpu / side.done
      const part =
        side === whole || side.label === "lean"
          ? ""
          : `   ${side.label === "against" ? "ours less it" : "the part"}: ${(whole.cpu / whole.done - cpu).toFixed(3)} ms (${((1 - cpu / (whole.cpu / whole.done)) * 100).toFixed(1)} %), ${Math.round(whole.wal / whole.done - side.wal / side.done)} WAL bytes`
      console.log(
        `  ${side.label.padEnd(22)} ${cpu.toFixed(3)} ms (${(cpu / (sides.at(-1).cpu / sides.at(-1).done)).toFixed(2)}× lean) ${Math.round(
          side.wal / side.done
        )
          .toString()
          .padStart(6)} WAL bytes ${(side.blocks / side.done).toFixed(1).padStart(6)} buffers${part}`
      )
    }
  } finally {
    for (const side of sides) await side.close()
  }
}

const ms = (value) => `${value.toFixed(value < 1 ? 3 : 1)} ms`

/** The services of a build: this one, or another's through its `@issuing/http` dist/index.js. */
const buildOf = async (httpDist) => {
  if (httpDist === undefined) {
    const [http, core, effect] = await Promise.all([import("@issuing/http"), import("@issuing/core"), import("effect")])
    return { http, core, effect }
  }
  const root = path.resolve(path.dirname(httpDist), "../../..")
  const from = (file) => import(path.join(root, file))
  const [http, core, effect] = await Promise.all([
    from("packages/http/dist/index.js"),
    from("packages/core/dist/index.js"),
    from("node_modules/effect/dist/esm/index.js")
  ])
  return { http, core, effect }
}

/**
 * One batch run of a build on database `name`: `WALLETS` funded wallets, then `connections` loops
 * posting batches of `size` book transfers through the ledger for `seconds` after `warmup`.
 */
const batches = async (adminUrl, dataDir, name, build, { size, connections, seconds, warmup, statements }) => {
  const { http, core, effect } = build
  const { Effect, Schema } = effect
  const url = await createDatabase(adminUrl, name)
  const instance = await http.createIssuing({
    store: http.storeFor({ kind: "postgres", url }),
    vaultKeys: [crypto.randomBytes(32)],
    background: false,
    log: null
  })
  try {
    const run = (effect) => instance.runtime.runPromise(effect)
    const org = await run(Effect.flatMap(core.Access, (access) => access.createOrganization("posting")))
    const programId = org.program_id
    const decodeTransfer = Schema.decodeUnknownSync(core.CreateTransfer)
    const accounts = await fundedWallets(instance, programId, WALLETS, FUNDING_MINOR, build)
    const post = (requests) =>
      run(Effect.flatMap(core.Ledger, (ledger) => ledger.postTransfers(programId, requests, false))).then((results) => {
        for (const result of results) if (result._tag !== "Right") throw new Error(`not posted: ${JSON.stringify(result.left)}`)
      })
    const batch = () =>
      Array.from({ length: size }, () => {
        const [from, to] = pick(accounts)
        return decodeTransfer({
          payment_rail: "book",
          amount: 1 + Math.floor(Math.random() * 100),
          currency: "USD",
          from_financial_account_id: from,
          to_financial_account_id: to
        })
      })
    const loop = async (deadline, done) => {
      while (performance.now() < deadline) {
        const requests = batch()
        const t0 = performance.now()
        await post(requests)
        done(performance.now() - t0)
      }
    }
    const warm = performance.now() + warmup * 1000
    await Promise.all(Array.from({ length: connections }, () => loop(warm, () => {})))
    if (statements) await resetStatements(adminUrl)
    const latencies = []
    const workBefore = await workSoFar(adminUrl, name)
    const cpuBefore = serverCpuMs(dataDir)
    const nodeBefore = process.cpuUsage()
    const started = performance.now()
    await Promise.all(Array.from({ length: connections }, () => loop(started + seconds * 1000, (ms) => latencies.push(ms))))
    const elapsedMs = performance.now() - started
    const cpuMs = serverCpuMs(dataDir) - cpuBefore
    const node = process.cpuUsage(nodeBefore)
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const workAfter = await workSoFar(adminUrl, name)
    const transfers = latencies.length * size
    const sorted = Float64Array.from(latencies).sort()
    if (statements) {
      console.log(`  statements per batch of ${size} (${latencies.length} batches; nested times are within their caller's)`)
      for (const row of await statementsOf(adminUrl, name, 25))
        console.log(
          `  ${row.toplevel ? "top" : "  n"} ${(row.calls / latencies.length).toFixed(2).padStart(7)} calls ${(row.plans / latencies.length).toFixed(2).padStart(5)} plans ${(row.ms / latencies.length).toFixed(2).padStart(7)} ms ${(row.plan_ms / latencies.length).toFixed(2).padStart(6)} ms planning ${(row.blocks / latencies.length).toFixed(0).padStart(6)} buffers ${Math.round(
            row.wal / latencies.length
          )
            .toString()
            .padStart(8)} WAL bytes  ${row.query.replace(/\s+/g, " ").slice(0, 110)}`
        )
    }
    return {
      perSecond: transfers / (elapsedMs / 1000),
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      cpuMsPerTransfer: cpuMs / transfers,
      nodeMsPerTransfer: (node.user + node.system) / 1000 / transfers,
      walPerTransfer: (workAfter.wal - workBefore.wal) / transfers,
      blocksPerTransfer: (workAfter.blocks - workBefore.blocks) / transfers
    }
  } finally {
    await instance.dispose()
  }
}

const runBatches = async (args) => {
  const settings = {
    size: Number(option(args, "batch", "100")),
    seconds: Number(option(args, "seconds", "5")),
    connections: Number(option(args, "connections", "4")),
    warmup: Number(option(args, "warmup", "3")),
    statements: args.includes("--statements")
  }
  const runs = Number(option(args, "runs", "3"))
  const against = option(args, "against", undefined)
  const builds = [["ours", await buildOf(undefined)], ...(against === undefined ? [] : [["against", await buildOf(against)]])]
  const server = await startPostgres({ statements: settings.statements })
  if (server.dataDir === undefined) throw new Error("posting: measures the CPU of an embedded server; unset ISSUING_BENCH_PG_URL")
  console.log(
    `posting: the ledger's batches of ${settings.size} book transfers on PostgreSQL, no HTTP, ${settings.connections} loops, ${settings.seconds} s each, ${runs} runs${against === undefined ? "" : ` alternated with ${against}`}; ${os.cpus().length} cores`
  )
  const results = new Map(builds.map(([label]) => [label, []]))
  try {
    for (let run = 1; run <= runs; run++) {
      for (const [label, build] of builds) {
        const r = await batches(server.adminUrl, server.dataDir, `issuing_bench_batch_${label}_${run}`, build, settings)
        results.get(label).push(r)
        console.log(
          `run ${run} ${label.padEnd(7)} ${Math.round(r.perSecond)} transfers/s, batch p50 ${ms(r.p50)} p99 ${ms(r.p99)}; per transfer: PostgreSQL CPU ${ms(r.cpuMsPerTransfer)}, node ${ms(r.nodeMsPerTransfer)}, WAL ${Math.round(r.walPerTransfer)} bytes, buffers ${r.blocksPerTransfer.toFixed(1)} (load ${loadAverage()})`
        )
      }
    }
  } finally {
    await server.stop()
  }
  for (const [label, rs] of results)
    console.log(
      `${label.padEnd(7)} PostgreSQL CPU ms/transfer ${rs.map((r) => r.cpuMsPerTransfer.toFixed(3)).join(", ")}; node ${rs.map((r) => r.nodeMsPerTransfer.toFixed(3)).join(", ")}; transfers/s ${rs.map((r) => Math.round(r.perSecond)).join(", ")}`
    )
}

export async function run(args) {
  if (option(args, "batch", undefined) !== undefined) return runBatches(args)
  const seconds = Number(option(args, "seconds", "5"))
  const connections = Number(option(args, "connections", "16"))
  const runs = Number(option(args, "runs", "3"))
  const statements = args.includes("--statements")
  const settings = { seconds, connections, warmup: Number(option(args, "warmup", "3")), statements }
  const server = await startPostgres({ statements })
  if (server.dataDir === undefined) throw new Error("posting: measures the CPU of an embedded server; unset ISSUING_BENCH_PG_URL")
  if (args.includes("--paired")) {
    const drops = option(args, "drop", "")
      .split(",")
      .filter((part) => part !== "")
    try {
      return await runPaired(server, {
        rounds: Number(option(args, "rounds", "20")),
        calls: Number(option(args, "calls", "150")),
        drops,
        against: option(args, "against", undefined)
      })
    } finally {
      await server.stop()
    }
  }
  console.log(
    `posting: issuing_post_transfer vs lean_post_transfer on PostgreSQL alone, ${connections} connections, ${seconds} s each, ${runs} alternated runs; ${os.cpus().length} cores`
  )
  const drops = option(args, "drop", "")
    .split(",")
    .filter((part) => part !== "")
  const results = []
  const without = new Map(drops.map((part) => [part, []]))
  const perTransfer = (r) =>
    `db CPU ${r.cpuMsPerCall.toFixed(3)} ms, WAL ${Math.round(r.walPerCall)} bytes, buffers ${r.blocksPerCall.toFixed(1)}, ${Math.round(r.perSecond)}/s`
  try {
    for (let run = 1; run <= runs; run++) {
      const a = await ours(server.adminUrl, server.dataDir, run, settings)
      const loadOurs = loadAverage()
      for (const part of drops) {
        const d = await ours(server.adminUrl, server.dataDir, run, settings, part)
        without.get(part).push({ whole: a, without: d })
        console.log(
          `run ${run}: ours −${part.padEnd(16)} ${perTransfer(d)} (load ${loadAverage()}); the part: ${ms(a.cpuMsPerCall - d.cpuMsPerCall)} CPU (${((1 - d.cpuMsPerCall / a.cpuMsPerCall) * 100).toFixed(0)} %), ${Math.round(a.walPerCall - d.walPerCall)} WAL bytes, ${(a.blocksPerCall - d.blocksPerCall).toFixed(1)} buffers`
        )
      }
      const b = await lean(server.adminUrl, server.dataDir, run, settings)
      const loadLean = loadAverage()
      results.push({ ours: a, lean: b })
      console.log(
        `run ${run}: ours ${Math.round(a.perSecond)}/s p50 ${ms(a.p50)} p99 ${ms(a.p99)} db CPU ${a.cpuMsPerCall.toFixed(3)} ms/transfer (load ${loadOurs})\n` +
          `       lean ${Math.round(b.perSecond)}/s p50 ${ms(b.p50)} p99 ${ms(b.p99)} db CPU ${b.cpuMsPerCall.toFixed(3)} ms/transfer (load ${loadLean})\n` +
          `       ours/lean: rate ${(a.perSecond / b.perSecond).toFixed(2)}, db CPU per transfer ${(a.cpuMsPerCall / b.cpuMsPerCall).toFixed(2)}×\n` +
          `       per transfer: WAL ${Math.round(a.walPerCall)} / ${Math.round(b.walPerCall)} bytes, buffers ${a.blocksPerCall.toFixed(1)} / ${b.blocksPerCall.toFixed(1)} (ours / lean)`
      )
    }
  } finally {
    await server.stop()
  }
  if (drops.length > 0) {
    console.log("\neach part, ours whole less ours without it, per transfer (one figure a run):")
    for (const [part, rs] of without)
      console.log(
        `  ${part.padEnd(18)} CPU ${rs.map((r) => (r.whole.cpuMsPerCall - r.without.cpuMsPerCall).toFixed(3)).join(", ")} ms (${rs.map((r) => `${((1 - r.without.cpuMsPerCall / r.whole.cpuMsPerCall) * 100).toFixed(0)} %`).join(", ")}); WAL ${rs.map((r) => Math.round(r.whole.walPerCall - r.without.walPerCall)).join(", ")} bytes; buffers ${rs.map((r) => (r.whole.blocksPerCall - r.without.blocksPerCall).toFixed(1)).join(", ")}`
      )
  }
  const ratios = (pick) => results.map((r) => pick(r).toFixed(2)).join(", ")
  console.log(`\nours/lean rate: ${ratios((r) => r.ours.perSecond / r.lean.perSecond)}`)
  console.log(`ours/lean db CPU per transfer: ${ratios((r) => r.ours.cpuMsPerCall / r.lean.cpuMsPerCall)}`)
  console.log(`ours/lean WAL per transfer: ${ratios((r) => r.ours.walPerCall / r.lean.walPerCall)}`)
  console.log(`ours/lean buffers per transfer: ${ratios((r) => r.ours.blocksPerCall / r.lean.blocksPerCall)}`)
}
