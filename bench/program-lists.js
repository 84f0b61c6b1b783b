// `npm run bench -- program-lists [--rows=1000,1000000] [--store=sqlite,postgres] [--days=30] [--samples=9] [--against=DIR] [--explain=MS]`
//
// The program's transfer and transaction lists over a long history of every status and rail
// (docs/decisions.md "The program's lists as merged status ranges"): since migration 0940 the plain
// lists are the merge of the (status, rail) ranges of `issuing_transfers_by_status_rail` and the
// status ranges of `issuing_transactions_by_status`, not a range of a (program, created_at, id)
// index of their own. For each store and each `--rows`, a fresh database holds one program's
// `rows` transactions and their transfers, inserted directly by SQL (the stores' triggers count
// them as any writer's rows) with `created_at` spread evenly over the last `--days` days and, per
// 100 transfers, 70 book, 10 fednow_instant and 5 card transfers (SETTLED), 9 ach_same_day (3
// PENDING, 5 SETTLED, 1 RETURNED) and 6 wire (2 PENDING, 3 SETTLED, 1 RETURNED); their
// transactions PENDING with a pending transfer, else SETTLED but for one VOIDED, one DECLINED and
// one EXPIRED in 100. Then each list below, page_size 100, the median of `--samples` sequential
// reads after one unrecorded: page 1 both ways, page 1,000 (the last page when shorter), the page
// after it by `starting_after`, a time window of the middle half with its total_count, and a
// status filter for scale.
//
// `--against=DIR`: a built checkout of an earlier build (e.g. /work/base) grows its OWN database
// the same way (each build's migrations, so each its indexes), and every sample reads from both in
// turn, so both columns are of one time window; the two must answer the same ids and total_count,
// or the bench stops. `--explain=MS` (PostgreSQL): the plans (EXPLAIN ANALYZE, BUFFERS, auto_explain)
// of the statements slower than MS, each build's. The load average is printed per store and size.
import { Access } from "@issuing/core"
import * as httpPackage from "@issuing/http"
import Database from "better-sqlite3"
import { Effect } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { benchDatabase, numberOption, option, table } from "./support/common.js"
import { showExplained, withPgClient } from "./support/postgres.js"
import { benchServer, stopBenchServer } from "./support/server.js"

const DAY_MS = 86_400_000
const PAGE_SIZE = 100
const DEEP_PAGE = 1000

const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")

/** A transfer's rail and status, and its transaction's status, by `i % 100` (the mix above), as SQL over `i`. */
const MIX = {
  rail: `CASE WHEN m < 70 THEN 'book' WHEN m < 80 THEN 'fednow_instant' WHEN m < 85 THEN 'card'
              WHEN m < 94 THEN 'ach_same_day' ELSE 'wire' END`,
  status: `CASE WHEN m IN (85, 86, 87, 94, 95) THEN 'PENDING' WHEN m IN (93, 99) THEN 'RETURNED' ELSE 'SETTLED' END`,
  transaction: `CASE WHEN m IN (85, 86, 87, 94, 95) THEN 'PENDING' WHEN m = 81 THEN 'VOIDED' WHEN m = 82 THEN 'DECLINED'
                     WHEN m = 83 THEN 'EXPIRED' ELSE 'SETTLED' END`
}

/** Inserts `rows` transactions and a transfer each between accounts `a` and `b`, created_at evenly over [from, from + spanMs). */
const insertHistory = async (target, programId, [a, b], rows, from, spanMs) => {
  const step = spanMs / rows
  const chunk = 100_000
  if (target.kind === "sqlite") {
    const db = new Database(target.filename)
    db.pragma("busy_timeout = 10000")
    const series = `WITH RECURSIVE g(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM g WHERE i < ?),
      s AS (SELECT i, i % 100 AS m, strftime('%Y-%m-%dT%H:%M:%fZ', (? + i * ?) / 1000.0, 'unixepoch') AS at FROM g)`
    const transactions = db.prepare(`${series}
      INSERT INTO issuing_transactions (id, program_id, amount_minor, currency, status, created_at, updated_at)
      SELECT printf('00000000-0000-7000-8000-%012d', i), ?, 1 + i % 97, 'USD', ${MIX.transaction}, at, at FROM s`)
    const transfers = db.prepare(`${series}
      INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
        from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
      SELECT printf('00000000-0000-7000-9000-%012d', i), ?, printf('00000000-0000-7000-8000-%012d', i), ${MIX.rail},
             1 + i % 97, 'USD', CASE WHEN i % 2 = 0 THEN ? ELSE ? END, CASE WHEN i % 2 = 0 THEN ? ELSE ? END, ${MIX.status}, at, at
      FROM s`)
    for (let start = 0; start < rows; start += chunk) {
      const range = [start, Math.min(rows, start + chunk) - 1, from, step]
      db.transaction(() => {
        transactions.run(...range, programId)
        transfers.run(...range, programId, a, b, b, a)
      })()
    }
    db.close()
    return
  }
  await withPgClient(target.url, async (client) => {
    const series = `WITH s AS (SELECT i, i % 100 AS m, to_timestamp(($3::float8 + i * $4::float8) / 1000.0) AS at
                               FROM generate_series($1::int, $2::int) i)`
    for (let start = 0; start < rows; start += chunk) {
      const range = [start, Math.min(rows, start + chunk) - 1, from, step]
      await client.query("BEGIN")
      await client.query(
        `${series} INSERT INTO issuing_transactions (id, program_id, amount_minor, currency, status, created_at, updated_at)
         SELECT '00000000-0000-7000-8000-' || lpad(i::text, 12, '0'), $5, 1 + i % 97, 'USD', ${MIX.transaction}, at, at FROM s`,
        [...range, programId]
      )
      await client.query(
        `${series} INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
           from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
         SELECT '00000000-0000-7000-9000-' || lpad(i::text, 12, '0'), $5, '00000000-0000-7000-8000-' || lpad(i::text, 12, '0'),
                ${MIX.rail}, 1 + i % 97, 'USD', CASE WHEN i % 2 = 0 THEN $6 ELSE $7 END, CASE WHEN i % 2 = 0 THEN $7 ELSE $6 END,
                ${MIX.status}, at, at
         FROM s`,
        [...range, programId, a, b]
      )
      await client.query("COMMIT")
    }
    await client.query("ANALYZE")
  })
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** A build's database grown with the history, served: `{ label, baseUrl, headers, close }`. */
const grown = async (label, build, kind, rows, { from, end, explainOverMs }) => {
  const database = await benchDatabase(kind, `issuing_bench_program_lists_${label}`, { explainOverMs })
  const served = await benchServer(database.target, { keepAliveTimeout: 3_600_000 }, build)
  const org = await served.instance.runtime.runPromise(Effect.flatMap(build.Access, (access) => access.createOrganization("Bench")))
  const headers = { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id, "content-type": "application/json" }
  const accounts = []
  for (let i = 0; i < 2; i++) {
    const response = await fetch(`${served.baseUrl}/v1/wallets`, {
      method: "POST",
      headers,
      body: JSON.stringify({ holder: { name: `Holder ${i}` } })
    })
    if (response.status !== 200) throw new Error(`wallet: ${response.status} ${await response.text()}`)
    accounts.push((await response.json()).financial_account_id)
  }
  const began = performance.now()
  await insertHistory(database.target, org.program_id, accounts, rows, from, end - from)
  const insertSeconds = (performance.now() - began) / 1000
  return {
    label,
    baseUrl: served.baseUrl,
    headers,
    insertSeconds,
    takeExplained: database.takeExplained,
    close: async () => {
      await stopBenchServer(served)
      await database.drop()
    }
  }
}

const measureStore = async (kind, rows, { days, samples, against, explainOverMs }) => {
  const end = Date.now() - 60_000
  const from = end - days * DAY_MS
  const builds = [["new", { Access, createIssuing: httpPackage.createIssuing, storeFor: httpPackage.storeFor }]]
  if (against !== undefined) {
    const http = await import(pathToFileURL(path.join(against, "packages/http/dist/index.js")).href)
    const core = await import(pathToFileURL(path.join(against, "packages/core/dist/index.js")).href)
    builds.unshift(["old", { Access: core.Access, createIssuing: http.createIssuing, storeFor: http.storeFor }])
  }
  const servers = []
  try {
    for (const [label, build] of builds) servers.push(await grown(label, build, kind, rows, { from, end, explainOverMs }))
    const get = async (server, query) => {
      const started = performance.now()
      const response = await fetch(`${server.baseUrl}${query}`, { headers: server.headers })
      const body = await response.json()
      const ms = performance.now() - started
      if (response.status !== 200) throw new Error(`${server.label} ${query}: ${response.status} ${JSON.stringify(body)}`)
      return { ms, body }
    }
    const iso = (ms) => encodeURIComponent(new Date(ms).toISOString())
    const quarter = (end - from) / 4
    const deep = Math.min(DEEP_PAGE, Math.ceil(rows / PAGE_SIZE))
    const figures = []
    for (const list of ["/v1/transfers", "/v1/transactions"]) {
      const { body: deepPage } = await get(servers[0], `${list}?page_size=${PAGE_SIZE}&page=${deep}`)
      const cases = [
        ["page 1", ""],
        ["page 1, oldest first", "&order_by=created_at&ascending=true"],
        [`page ${deep}`, `&page=${deep}`],
        ["after it (starting_after)", `&starting_after=${deepPage.data.at(-1).id}`],
        ["middle half (created[])", `&created[gte]=${iso(from + quarter)}&created[lt]=${iso(end - quarter)}`],
        ["status=SETTLED (one or 5 ranges, as before)", "&status=SETTLED"]
      ]
      for (const [name, query] of cases) {
        const times = new Map(servers.map((server) => [server.label, []]))
        const answers = new Map()
        for (let sample = 0; sample <= samples; sample++) {
          for (const server of servers) {
            const { ms, body } = await get(server, `${list}?page_size=${PAGE_SIZE}${query}`)
            if (sample > 0) times.get(server.label).push(ms)
            answers.set(server.label, JSON.stringify([body.total_count, body.data.map((row) => row.id)]))
          }
        }
        if (new Set(answers.values()).size !== 1) throw new Error(`${list} ${name}: the builds answered differently`)
        const [total] = JSON.parse([...answers.values()][0])
        figures.push([`${list} ${name}`, total, ...servers.map((server) => median(times.get(server.label)).toFixed(1))])
      }
    }
    if (explainOverMs !== undefined) {
      for (const server of servers) showExplained(server.takeExplained(), `${server.label}: statements over ${explainOverMs} ms`, 12)
    }
    return {
      figures,
      labels: servers.map((server) => server.label),
      insertSeconds: servers.map((server) => server.insertSeconds.toFixed(0)).join(" / "),
      load: loadAverage()
    }
  } finally {
    for (const server of servers) await server.close()
  }
}

export const run = async (args) => {
  const stores = option(args, "store", "sqlite,postgres").split(",")
  const sizes = option(args, "rows", "1000,1000000").split(",").map(Number)
  const days = Number(option(args, "days", "30"))
  const samples = Number(option(args, "samples", "9"))
  const against = option(args, "against", undefined)
  const explainOverMs = numberOption(args, "explain")
  for (const kind of stores) {
    for (const rows of sizes) {
      const { figures, labels, insertSeconds, load } = await measureStore(kind, rows, { days, samples, against, explainOverMs })
      console.log(
        `\n${kind}, ${rows.toLocaleString("en-US")} transfers and transactions over ${days} days (inserted in ${insertSeconds} s); load ${load}`
      )
      console.log(table([["list", "total_count", ...labels.map((label) => `${label} ms`)], ...figures]))
    }
  }
}
