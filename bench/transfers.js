// `npm run bench -- transfers [--seconds=5] [--concurrency=32] [--store=sqlite,postgres]`
//
// Book transfers per second over HTTP (keep-alive client at concurrency 32, in a worker thread so
// it does not share the server's event loop), p50/p99 latency, on SQLite and on PostgreSQL; then,
// in the same run, a raw baseline that writes the same rows with the same driver and no HTTP, the
// way a hand-rolled ledger would: one durable transaction per transfer that reads both accounts,
// locks the balance rows (FOR UPDATE on PostgreSQL), inserts the transaction, transfer, book
// transfer, 4 entries, upserts the balances, inserts 3 events and runs their webhook fan-out
// INSERT … SELECT. SQLite raw: prepared statements, one synchronous BEGIN IMMEDIATE transaction per
// transfer. PostgreSQL raw: the whole transaction as ONE simple-query round trip (BEGIN; …; COMMIT)
// over a pool of 10 at the same concurrency — the fastest shape node-postgres allows. Prints
// our/raw as a ratio, and the load average (the machine is shared: compare figures of one run).
import { Access, CreateTransfer, CreateWallet, Ledger } from "@issuing/core"
import { createIssuing, storeFor } from "@issuing/http"
import Database from "better-sqlite3"
import { Effect, Schema } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { v7 as uuidv7 } from "uuid"
import { createDatabase, startPostgres } from "./support/postgres.js"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"

// The services take input decoded as the API decodes a body.
const decodeTransfer = Schema.decodeUnknownSync(CreateTransfer)
const decodeWallet = Schema.decodeUnknownSync(CreateWallet)

const WALLETS = 64
const FUNDING_MINOR = 1_000_000_000_000

const option = (args, name, fallback) => {
  const found = args.find((arg) => arg.startsWith(`--${name}=`))
  return found === undefined ? fallback : found.slice(name.length + 3)
}

const percentile = (sorted, p) => sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

// ---- load generator (worker thread) ---------------------------------------------------------

const drive = async ({ baseUrl, apiKey, programId, accounts, seconds, concurrency }) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  const url = new URL("/v1/transfers", baseUrl)
  const latencies = []
  let ok = 0
  let failed = 0
  const statuses = {}
  const deadline = performance.now() + seconds * 1000
  const one = () =>
    new Promise((resolve) => {
      const from = Math.floor(Math.random() * accounts.length)
      let to = Math.floor(Math.random() * (accounts.length - 1))
      if (to >= from) to += 1
      const body = JSON.stringify({
        paymentRail: "book",
        amount: 1 + Math.floor(Math.random() * 100),
        currency: "USD",
        from_financial_account_id: accounts[from],
        to_financial_account_id: accounts[to]
      })
      const started = performance.now()
      const request = http.request(url, {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${apiKey}`,
          "x-program-id": programId,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body)
        }
      }, (response) => {
        response.resume()
        response.on("end", () => {
          latencies.push(performance.now() - started)
          if (response.statusCode === 200) ok += 1
          else {
            failed += 1
            statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
          }
          resolve()
        })
      })
      request.on("error", () => {
        failed += 1
        resolve()
      })
      request.end(body)
    })
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) await one()
  }))
  const elapsedMs = performance.now() - started
  agent.destroy()
  return { ok, failed, statuses, elapsedMs, latencies }
}

if (!isMainThread && workerData?.role === "driver") {
  drive(workerData).then((result) => parentPort.postMessage(result))
}

// ---- the platform over HTTP ----------------------------------------------------------------

const httpRun = async (target, seconds, concurrency) => {
  const server = http.createServer()
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const baseUrl = `http://127.0.0.1:${server.address().port}`
  const instance = await createIssuing({
    store: storeFor(target),
    vaultKeys: [crypto.randomBytes(32)],
    settings: { baseUrl, rateLimitPerSecond: 1_000_000, rateLimitBurst: 1_000_000 }
  })
  server.on("request", instance.listener)
  server.keepAliveTimeout = 60_000
  const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("bench")))
  const accounts = await instance.runtime.runPromise(Effect.flatMap(Ledger, (ledger) =>
    Effect.forEach(Array.from({ length: WALLETS }, (_, i) => i), (i) =>
      Effect.gen(function*() {
        const wallet = yield* ledger.createWallet(org.program_id, decodeWallet({ holder: { name: `Wallet ${i}` } }))
        yield* ledger.postTransfer(org.program_id, decodeTransfer({
          payment_rail: "fednow_instant",
          amount: FUNDING_MINOR,
          currency: "USD",
          to_financial_account_id: wallet.financial_account_id
        }))
        return wallet.financial_account_id
      }))))
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { role: "driver", baseUrl, apiKey: org.api_key, programId: org.program_id, accounts, seconds, concurrency }
  })
  const result = await new Promise((resolve, reject) => {
    worker.once("message", resolve)
    worker.once("error", reject)
  })
  await worker.terminate()
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await instance.dispose()
  const sorted = Float64Array.from(result.latencies).sort()
  return {
    perSecond: result.ok / (result.elapsedMs / 1000),
    ok: result.ok,
    failed: result.failed,
    statuses: result.statuses,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99)
  }
}

// ---- raw baselines: the same rows, the same drivers, no HTTP -------------------------------

/** The rows one book transfer writes, as literal-free parameter lists. */
const rowsOf = (programId, from, to, amount) => {
  const now = new Date().toISOString()
  const transactionId = uuidv7()
  const transferId = uuidv7()
  const bookTransferId = uuidv7()
  const transfer = { id: transferId, amount }
  return { now, transactionId, transferId, bookTransferId, transfer, programId, from, to, amount }
}

const RAW_SQL = {
  transaction: `INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, merchant_name, created_at, updated_at)
                VALUES (?, ?, 'SETTLED', ?, 'USD', NULL, NULL, NULL, NULL, ?, ?)`,
  transfer: `INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency, from_financial_account_id, to_financial_account_id, status, description, created_at, updated_at)
             VALUES (?, ?, ?, 'book', ?, 'USD', ?, ?, 'SETTLED', NULL, ?, ?)`,
  bookTransfer: `INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at) VALUES (?, ?, ?, ?, ?, 'USD', ?)`,
  entries: `INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
            VALUES (?, 0, ?, 'principal', 'DEBIT', ?, 'USD'), (?, 1, ?, 'cash', 'CREDIT', ?, 'USD'),
                   (?, 2, ?, 'cash', 'DEBIT', ?, 'USD'), (?, 3, ?, 'principal', 'CREDIT', ?, 'USD')`,
  balances: `INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, updated_at)
             VALUES (?, 'principal', 'USD', ?, 0, ?), (?, 'cash', 'USD', 0, ?, ?), (?, 'cash', 'USD', ?, 0, ?), (?, 'principal', 'USD', 0, ?, ?)
             ON CONFLICT (financial_account_id, book) DO UPDATE SET debits_minor = issuing_balances.debits_minor + excluded.debits_minor,
               credits_minor = issuing_balances.credits_minor + excluded.credits_minor, updated_at = excluded.updated_at`,
  // What a hand-rolled ledger validates: both accounts exist in the program, their kind and currency.
  accounts: `SELECT a.id, a.kind, a.currency, b.debits_minor, b.credits_minor FROM issuing_financial_accounts a
             JOIN issuing_balances b ON b.financial_account_id = a.id AND b.book = 'principal'
             WHERE a.program_id = ? AND a.id IN (?, ?)`,
  lock: `SELECT financial_account_id, book, debits_minor, credits_minor FROM issuing_balances WHERE financial_account_id IN (?, ?) ORDER BY financial_account_id, book`,
  event: `INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES (?, ?, ?, ?, ?)`,
  // The webhook fan-out of each event (the same INSERT … SELECT as the webhook store; no subscriptions here).
  fanOut: `INSERT INTO issuing_webhook_deliveries (id, program_id, subscription_id, event_id, attempt_count, next_attempt_at, claim_token, created_at)
           SELECT ? || ':' || et.subscription_id, et.program_id, et.subscription_id, ?, 0, ?, NULL, ?
           FROM issuing_webhook_event_types et JOIN issuing_webhook_subscriptions s ON s.id = et.subscription_id
           WHERE et.program_id = ? AND et.event_type = ? AND s.disabled = false`
}

const rawParams = (r) => ({
  transaction: [r.transactionId, r.programId, r.amount, r.now, r.now],
  transfer: [r.transferId, r.programId, r.transactionId, r.amount, r.from, r.to, r.now, r.now],
  bookTransfer: [r.bookTransferId, r.programId, r.transferId, r.transactionId, r.amount, r.now],
  entries: [r.bookTransferId, r.from, r.amount, r.bookTransferId, r.from, r.amount, r.bookTransferId, r.to, r.amount, r.bookTransferId, r.to, r.amount],
  balances: [r.from, r.amount, r.now, r.from, r.amount, r.now, r.to, r.amount, r.now, r.to, r.amount, r.now],
  accounts: [r.programId, r.from, r.to],
  lock: [r.from, r.to].sort(),
  events: ["transfer.created", "transaction.updated", "transfer.settled"].map((type) => [uuidv7(), r.programId, type, r.now, JSON.stringify(r.transfer)]),
  fanOuts: [] // filled below from the events
})

const withFanOuts = (p) => ({
  ...p,
  fanOuts: p.events.map(([id, programId, type, now]) => [id, id, now, now, programId, type])
})

/** Creates the schema and the accounts through the platform, then closes it. */
const prepareRaw = async (target) => {
  const instance = await createIssuing({ store: storeFor(target), vaultKeys: [crypto.randomBytes(32)] })
  const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("raw")))
  const accounts = await instance.runtime.runPromise(Effect.flatMap(Ledger, (ledger) =>
    Effect.forEach(Array.from({ length: WALLETS }, (_, i) => i), (i) =>
      Effect.map(ledger.createWallet(org.program_id, decodeWallet({ holder: { name: `Wallet ${i}` } })), (wallet) => wallet.financial_account_id))))
  await instance.dispose()
  return { programId: org.program_id, accounts }
}

const pick = (accounts) => {
  const from = Math.floor(Math.random() * accounts.length)
  let to = Math.floor(Math.random() * (accounts.length - 1))
  if (to >= from) to += 1
  return [accounts[from], accounts[to]]
}

const rawSqlite = async (filename, seconds) => {
  const { programId, accounts } = await prepareRaw({ kind: "sqlite", filename })
  const db = new Database(filename)
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = FULL")
  db.pragma("foreign_keys = ON")
  const statements = Object.fromEntries(Object.entries(RAW_SQL).map(([name, text]) => [name, db.prepare(text)]))
  const one = db.transaction((p) => {
    statements.accounts.all(...p.accounts)
    statements.lock.all(...p.lock)
    statements.transaction.run(...p.transaction)
    statements.transfer.run(...p.transfer)
    statements.bookTransfer.run(...p.bookTransfer)
    statements.entries.run(...p.entries)
    statements.balances.run(...p.balances)
    for (const event of p.events) statements.event.run(...event)
    for (const fanOut of p.fanOuts) statements.fanOut.run(...fanOut)
  })
  const latencies = []
  let ok = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  while (performance.now() < deadline) {
    const [from, to] = pick(accounts)
    const t0 = performance.now()
    one.immediate(withFanOuts(rawParams(rowsOf(programId, from, to, 1))))
    latencies.push(performance.now() - t0)
    ok += 1
  }
  const elapsedMs = performance.now() - started
  db.close()
  const sorted = Float64Array.from(latencies).sort()
  return { perSecond: ok / (elapsedMs / 1000), p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
}

const literal = (value) =>
  typeof value === "number" ? String(value) : value === null ? "NULL" : `'${String(value).replace(/'/g, "''")}'`
const inline = (text, params) => {
  let index = 0
  return text.replace(/\?/g, () => literal(params[index++]))
}

/** One round trip per transfer: BEGIN; read; lock; inserts; upsert; events; fan-out; COMMIT as one simple query. */
const rawPostgres = async (url, seconds, concurrency) => {
  const { programId, accounts } = await prepareRaw({ kind: "postgres", url })
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const latencies = []
  let ok = 0
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline) {
      const [from, to] = pick(accounts)
      const p = withFanOuts(rawParams(rowsOf(programId, from, to, 1)))
      const text = [
        "BEGIN",
        inline(RAW_SQL.accounts, p.accounts),
        `${inline(RAW_SQL.lock, p.lock)} FOR UPDATE`,
        inline(RAW_SQL.transaction, p.transaction),
        inline(RAW_SQL.transfer, p.transfer),
        inline(RAW_SQL.bookTransfer, p.bookTransfer),
        inline(RAW_SQL.entries, p.entries),
        inline(RAW_SQL.balances, p.balances),
        ...p.events.map((event) => inline(RAW_SQL.event, event)),
        ...p.fanOuts.map((fanOut) => inline(RAW_SQL.fanOut, fanOut)),
        "COMMIT"
      ].join(";\n")
      const t0 = performance.now()
      await pool.query(text)
      latencies.push(performance.now() - t0)
      ok += 1
    }
  }))
  const elapsedMs = performance.now() - started
  await pool.end()
  const sorted = Float64Array.from(latencies).sort()
  return { perSecond: ok / (elapsedMs / 1000), p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
}

// ---- PostgreSQL server for the run (bench/support/postgres.js) ------------------------------

// Idle pool clients see "terminating connection due to administrator command" (57P01) when the
// embedded server stops at the end of the run; that is expected, not a failure of the benchmark.
process.on("uncaughtException", (error) => {
  if (error?.code === "57P01") return
  console.error(error)
  process.exit(1)
})

const fmt = (n) => n.toFixed(0).padStart(6)
const ms = (n) => `${n.toFixed(2)} ms`

const load = () => os.loadavg().map((n) => n.toFixed(2)).join(" ")

const report = (store, ours, raw) => {
  console.log(`${store.padEnd(9)} HTTP ${fmt(ours.perSecond)} transfers/s  p50 ${ms(ours.p50)}  p99 ${ms(ours.p99)}  (ok ${ours.ok}, failed ${ours.failed}${ours.failed ? " " + JSON.stringify(ours.statuses) : ""})`)
  console.log(`${"".padEnd(9)} raw  ${fmt(raw.perSecond)} transfers/s  p50 ${ms(raw.p50)}  p99 ${ms(raw.p99)}`)
  console.log(`${"".padEnd(9)} ratio our/raw ${(ours.perSecond / raw.perSecond).toFixed(2)}   (load average ${load()})`)
}

/** Entry point for bench/run.js. */
export async function run(args) {
  const seconds = Number(option(args, "seconds", "5"))
  const concurrency = Number(option(args, "concurrency", "32"))
  const stores = option(args, "store", "sqlite,postgres").split(",")
  console.log(`transfers: book transfers over HTTP, concurrency ${concurrency}, ${seconds}s per run, ${os.cpus().length} cores, load average ${load()}`)
  if (stores.includes("sqlite")) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-"))
    try {
      const ours = await httpRun({ kind: "sqlite", filename: path.join(dir, "http.db") }, seconds, concurrency)
      const raw = await rawSqlite(path.join(dir, "raw.db"), seconds)
      report("sqlite", ours, raw)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  if (stores.includes("postgres")) {
    const server = await startPostgres()
    try {
      const ours = await httpRun({ kind: "postgres", url: await createDatabase(server.adminUrl, "issuing_bench_http") }, seconds, concurrency)
      const raw = await rawPostgres(await createDatabase(server.adminUrl, "issuing_bench_raw"), seconds, concurrency)
      report("postgres", ours, raw)
    } finally {
      await server.stop()
    }
  }
}
