// `npm run bench -- spend [--counts=1000,100000] [--stores=sqlite,postgres] [--samples=300]`
//
// What a card's spending period costs an authorization as the card's history grows
// (docs/card-transactions.md#spend-controls, docs/operations.md#volume). One card with an ALL_TIME
// limit (what every authorization of it sums: its whole history) and one with a YEARLY limit get
// N settled transactions each, spread over the last three years; at each N the bench times, one
// request at a time (p50 / p99 of `--samples` after 20 unmeasured):
//   all_time  POST /v1/simulate/authorizations on the ALL_TIME card;
//   yearly    the same on the YEARLY card;
//   plain     the same on a card without a spending period (what the period adds is the difference);
//   transfer  POST /v1/transfers, a book transfer between two wallets (no card: what the spend
//             triggers cost a write that is not a card's);
// and the read alone, in-process through the platform's SqlClient (no HTTP, no commit):
//   sum       the SUM over the ALL_TIME card's transactions (what the period read before 0380);
//   sum_year  the same over the YEARLY card's transactions of this year;
//   kept      the ALL_TIME card's maintained row, kept_year the YEARLY card's row of this year
//             (issuing_card_spend_totals since 0751; before it, issuing_card_spend's day rows of
//             this year; not printed where neither table exists);
//   no_card   one multi-row INSERT of 1,000 transactions without a card (a batch's statement
//             shape): what the spend triggers' WHEN costs the rows it skips (`--samples` / 4 inserts);
//   no_card with / without  the same INSERT with the spend's INSERT trigger there and taken away
//             (PostgreSQL: DISABLE TRIGGER; SQLite: dropped and made again from its own text), in
//             alternated rounds on the same database: the triggers' cost apart from the machine's
//             drift (not printed where the trigger does not exist).
// The transactions are written straight into issuing_transactions (one multi-row INSERT per 1,000,
// through the platform's own SqlClient, so any trigger on the table runs as for any writer), not
// through the API: 100,000 authorizations over HTTP would take the bench's whole time. The script
// only speaks HTTP and plain SQL, so the same file run from an older checkout measures that
// version side by side. The machine is shared: read figures of one run, with its load average.
import { SqlClient } from "@effect/sql"
import { Access } from "@issuing/core"
import { Effect } from "effect"
import * as http from "node:http"
import * as os from "node:os"
import { benchDatabase, option, percentile, requester } from "./support/common.js"
import { benchServer } from "./support/server.js"

const YEARS_BACK_MS = 3 * 365 * 86_400_000

/** Inserts `count` settled transactions of 1 minor unit on each card, created over the last three years. */
const seed = (instance, programId, cardIds, from, count) =>
  instance.runtime.runPromise(
    Effect.gen(function* () {
      const sql = (yield* SqlClient.SqlClient).withoutTransforms()
      const now = Date.now()
      for (let done = from; done < from + count; done += 1000) {
        const rows = []
        for (let i = done; i < Math.min(done + 1000, from + count); i++)
          for (const cardId of cardIds) {
            const at = new Date(now - 86_400_000 - Math.floor((((i * 7919) % 1_000_003) / 1_000_003) * YEARS_BACK_MS)).toISOString()
            rows.push({
              id: `txn_bench_${cardId}_${i}`,
              program_id: programId,
              status: "SETTLED",
              amount_minor: 1,
              currency: "USD",
              card_id: cardId,
              created_at: at,
              updated_at: at,
              authorized_minor: 1,
              pending_minor: 0,
              settled_minor: 1
            })
          }
        yield* sql`INSERT INTO issuing_transactions ${sql.insert(rows)}`
      }
    })
  )

/** p50 / p99 of `samples` sequential runs of `statement` after 20 unmeasured; null when the statement fails. */
const timeStatement = (instance, samples, statement) =>
  instance.runtime.runPromise(
    Effect.gen(function* () {
      const sql = (yield* SqlClient.SqlClient).withoutTransforms()
      const latencies = []
      for (let i = 0; i < samples + 20; i++) {
        const started = performance.now()
        const failed = yield* Effect.isFailure(statement(sql))
        if (failed) return null
        if (i >= 20) latencies.push(performance.now() - started)
      }
      latencies.sort((a, b) => a - b)
      return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) }
    })
  )

/** A multi-row INSERT of 1,000 transactions without a card, with ids under `prefix`. */
const insertNoCard = (sql, programId, prefix) => {
  const at = new Date().toISOString()
  const rows = Array.from({ length: 1000 }, (_, i) => ({
    id: `${prefix}_${i}`,
    program_id: programId,
    status: "SETTLED",
    amount_minor: 1,
    currency: "USD",
    card_id: null,
    created_at: at,
    updated_at: at,
    pending_minor: 0,
    settled_minor: 1
  }))
  return sql`INSERT INTO issuing_transactions ${sql.insert(rows)}`
}

/**
 * p50 of `rounds` × 2 inserts of 1,000 card-less transactions with the spend's INSERT trigger and
 * as many without it, alternated; null when the trigger does not exist (before migration 0380).
 */
const ablation = (instance, kind, programId, count, rounds) =>
  instance.runtime.runPromise(
    Effect.gen(function* () {
      const sql = (yield* SqlClient.SqlClient).withoutTransforms()
      const [totals] =
        kind === "postgres"
          ? yield* sql`SELECT tgname FROM pg_trigger WHERE tgname = 'issuing_card_spend_totals_insert'`
          : yield* sql`SELECT name FROM sqlite_master WHERE type = 'trigger' AND name = 'issuing_card_spend_totals_insert'`
      const trigger = totals === undefined ? "issuing_card_spend_insert" : "issuing_card_spend_totals_insert"
      const [found] =
        kind === "postgres"
          ? yield* sql`SELECT tgname AS sql FROM pg_trigger WHERE tgname = ${trigger}`
          : yield* sql`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ${trigger}`
      if (found === undefined) return null
      const off =
        kind === "postgres"
          ? sql.unsafe(`ALTER TABLE issuing_transactions DISABLE TRIGGER ${trigger}`)
          : sql.unsafe(`DROP TRIGGER ${trigger}`)
      const on = kind === "postgres" ? sql.unsafe(`ALTER TABLE issuing_transactions ENABLE TRIGGER ${trigger}`) : sql.unsafe(found.sql)
      const times = { with: [], without: [] }
      let n = 0
      for (let round = 0; round < rounds; round++)
        for (const side of round % 2 === 0 ? ["with", "without"] : ["without", "with"]) {
          if (side === "without") yield* off
          for (let i = 0; i < 2; i++) {
            const started = performance.now()
            yield* insertNoCard(sql, programId, `txn_bench_ablation_${count}_${n++}`)
            times[side].push(performance.now() - started)
          }
          if (side === "without") yield* on
        }
      for (const side of Object.values(times)) side.sort((a, b) => a - b)
      return { with: percentile(times.with, 0.5), without: percentile(times.without, 0.5) }
    })
  )

const measure = async (target, counts, samples) => {
  const { server, baseUrl, instance } = await benchServer(target, { keepAliveTimeout: 65_000 })
  // A new connection after each seeding, which may outlast the server's keep-alive.
  let agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("spend")))
  // Migration 0751's running totals, or 0380's per-day table before it.
  const totalsTable = await instance.runtime.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.map(
        sql`SELECT 1 AS hit FROM issuing_card_spend_totals LIMIT 1`.pipe(
          Effect.as(true),
          Effect.orElseSucceed(() => false)
        ),
        (exists) => exists
      )
    )
  )
  const call = (method, route, body) =>
    requester(baseUrl, agent, { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id })(method, route, body)
  const json = async (method, route, body) => {
    const response = await call(method, route, body)
    if (response.status !== 200) throw new Error(`${method} ${route}: ${response.status} ${response.text}`)
    return JSON.parse(response.text)
  }
  const wallet = async () => {
    const created = await json("POST", "/v1/wallets", { holder: { name: "Fleet" } })
    await json("POST", "/v1/transfers", {
      paymentRail: "fednow_instant",
      amount: 1e13,
      currency: "USD",
      to_financial_account_id: created.financial_account_id
    })
    return created
  }
  const fleet = await wallet()
  const other = await wallet()
  const card = async (extra) => (await json("POST", "/v1/cards", { wallet_id: fleet.id, type: "VIRTUAL", ...extra })).id
  const cards = {
    all_time: await card({ spendingPeriod: { interval: "ALL_TIME", amount: 1e12 } }),
    yearly: await card({ spendingPeriod: { interval: "YEARLY", amount: 1e12 } }),
    plain: await card({})
  }
  const lines = {
    all_time: () => call("POST", "/v1/simulate/authorizations", { card_id: cards.all_time, amount: 1, mcc: "5411" }),
    yearly: () => call("POST", "/v1/simulate/authorizations", { card_id: cards.yearly, amount: 1, mcc: "5411" }),
    plain: () => call("POST", "/v1/simulate/authorizations", { card_id: cards.plain, amount: 1, mcc: "5411" }),
    transfer: () =>
      call("POST", "/v1/transfers", {
        paymentRail: "book",
        amount: 1,
        currency: "USD",
        from_financial_account_id: fleet.financial_account_id,
        to_financial_account_id: other.financial_account_id
      })
  }
  const results = []
  let seeded = 0
  for (const count of counts) {
    const began = performance.now()
    await seed(instance, org.program_id, [cards.all_time, cards.yearly], seeded, count - seeded)
    const seedSeconds = (performance.now() - began) / 1000
    seeded = count
    agent.destroy()
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const row = { count, seedSeconds }
    for (const [name, send] of Object.entries(lines)) {
      const latencies = []
      for (let i = 0; i < samples + 20; i++) {
        const started = performance.now()
        const response = await send()
        if (response.status !== 200 || response.text.includes('"DECLINED"')) throw new Error(`${name}: ${response.status} ${response.text}`)
        if (i >= 20) latencies.push(performance.now() - started)
      }
      latencies.sort((a, b) => a - b)
      row[name] = { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) }
    }
    const yearStart = new Date(Date.UTC(new Date().getUTCFullYear(), 0, 1))
    const reads = {
      sum: (sql) =>
        sql`SELECT COALESCE(SUM(pending_minor + settled_minor), 0) AS spent FROM issuing_transactions WHERE card_id = ${cards.all_time}`,
      sum_year: (sql) =>
        sql`SELECT COALESCE(SUM(pending_minor + settled_minor), 0) AS spent FROM issuing_transactions
            WHERE card_id = ${cards.yearly} AND created_at >= ${yearStart.toISOString()}`,
      kept: (sql) =>
        totalsTable
          ? sql`SELECT spent_minor, spent_count FROM issuing_card_spend_totals
                WHERE card_id = ${cards.all_time} AND spend_interval = 'ALL_TIME' AND window_start = ''`
          : sql`SELECT COALESCE(SUM(spent_minor), 0) AS spent FROM issuing_card_spend WHERE card_id = ${cards.all_time} AND day = ''`,
      kept_year: (sql) =>
        totalsTable
          ? sql`SELECT spent_minor, spent_count FROM issuing_card_spend_totals
                WHERE card_id = ${cards.yearly} AND spend_interval = 'YEARLY' AND window_start = ${yearStart.toISOString().slice(0, 10)}`
          : sql`SELECT COALESCE(SUM(spent_minor), 0) AS spent FROM issuing_card_spend
                WHERE card_id = ${cards.yearly} AND day >= ${yearStart.toISOString().slice(0, 10)}`
    }
    for (const [name, statement] of Object.entries(reads)) row[name] = await timeStatement(instance, samples, statement)
    let inserted = 0
    row.no_card = await timeStatement(instance, Math.ceil(samples / 4), (sql) =>
      Effect.suspend(() => insertNoCard(sql, org.program_id, `txn_bench_book_${count}_${inserted++}`))
    )
    row.ablation = await ablation(instance, target.kind, org.program_id, count, Math.ceil(samples / 4))
    results.push(row)
  }
  agent.destroy()
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await instance.dispose()
  return results
}

export async function run(args) {
  const counts = option(args, "counts", "1000,100000").split(",").map(Number)
  const stores = option(args, "stores", "sqlite,postgres").split(",")
  const samples = Number(option(args, "samples", "300"))
  console.log(`spend bench: transactions per card ${counts.join(", ")}; ${samples} requests per line, one at a time`)
  for (const kind of stores) {
    const database = await benchDatabase(kind, "issuing_bench_spend")
    try {
      for (const row of await measure(database.target, counts, samples)) {
        const cell = (name) => (row[name] === null ? "" : `${name} ${row[name].p50.toFixed(2)} / ${row[name].p99.toFixed(2)}`)
        const cells = (names) =>
          names
            .map(cell)
            .filter((text) => text !== "")
            .join("  ")
        const head = `${kind.padEnd(8)} N=${String(row.count).padEnd(7)}`
        console.log(`${head} HTTP p50 / p99 ms: ${cells(["all_time", "yearly", "plain", "transfer"])}`)
        console.log(`${head} read p50 / p99 ms: ${cells(["sum", "sum_year", "kept", "kept_year", "no_card"])}`)
        if (row.ablation !== null)
          console.log(
            `${head} no_card p50 ms with the spend trigger ${row.ablation.with.toFixed(2)}, without ${row.ablation.without.toFixed(2)}`
          )
        console.log(`${head} seeded in ${row.seedSeconds.toFixed(1)} s, load ${os.loadavg()[0].toFixed(1)}`)
      }
    } finally {
      await database.drop()
    }
  }
}
