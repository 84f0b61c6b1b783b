import { SqlClient } from "@effect/sql"
import { runDeliveryWorker } from "@issuing/core"
import { expectedListCounts, maintainedListCounts } from "@issuing/core/testing"
import { Effect, Fiber } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund, transfer } from "../ledger/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { type Receiver, startReceiver } from "../webhooks/receiver.js"
import { newId, Transactor } from "@issuing/core"

/**
 * `total_count` is exact for every list and every filter combination (docs/api.md#paging), now that
 * the big lists read maintained counts (docs/operations.md#volume): after concurrent transfers,
 * batches (per item and atomic, with refusals), settles, card state changes, subscription changes
 * and deliveries, each list's `total_count` under every combination of the filter values present
 * is compared with a `COUNT(*)` of the table read through SQL.
 */

type Filters = Record<string, string | undefined>

/** Every combination of the given values per filter, "absent" included. */
const combinations = (values: Record<string, ReadonlyArray<string>>): Array<Filters> =>
  Object.entries(values).reduce<Array<Filters>>(
    (combos, [name, options]) => combos.flatMap((combo) => [combo, ...options.map((value) => ({ ...combo, [name]: value }))]),
    [{}]
  )

const query = (filters: Filters) =>
  Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `&${name}=${encodeURIComponent(value!)}`)
    .join("")

describe.each(STORE_KINDS)("total_count on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  beforeAll(async () => {
    platform = await startPlatform(kind, { webhookRetryScheduleMs: [50, 50], webhookTimeoutMs: 2000 })
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await receiver?.close()
    await platform?.close()
  })

  const sqlRows = <A>(make: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    platform.instance.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => make(sql.withoutTransforms())))
  const distinct = (table: string, column: string) =>
    sqlRows((sql) =>
      sql`SELECT DISTINCT ${sql.literal(column)} AS v FROM ${sql.literal(table)}
          WHERE program_id = ${platform.org.program_id} AND ${sql.literal(column)} IS NOT NULL`.pipe(
        Effect.map((rows) => rows.map((row) => String(row.v)).sort())
      )
    )
  const countOf = (table: string, conditions: (sql: SqlClient.SqlClient) => ReadonlyArray<any>) =>
    sqlRows((sql) =>
      sql`SELECT COUNT(*) AS n FROM ${sql.literal(table)} WHERE ${sql.and([sql`program_id = ${platform.org.program_id}`, ...conditions(sql)])}`.pipe(
        Effect.map((rows) => Number(rows[0]!.n))
      )
    )
  /** Each combination's `total_count` against the table's count; the mismatches, as lines. */
  const mismatches = async (
    path: string,
    values: Record<string, ReadonlyArray<string>>,
    table: string,
    conditions: (sql: SqlClient.SqlClient, filters: Filters) => ReadonlyArray<any>
  ) => {
    const wrong: Array<string> = []
    for (const filters of combinations(values)) {
      const response = await platform.request("GET", `${path}?page_size=1${query(filters)}`)
      expect(response.status, response.text).toBe(200)
      const counted = await countOf(table, (sql) => conditions(sql, filters))
      if (response.body.total_count !== counted) wrong.push(`${path} ${JSON.stringify(filters)}: ${response.body.total_count} ≠ ${counted}`)
    }
    return wrong
  }
  const equal = (column: string, value: string | undefined) => (sql: SqlClient.SqlClient) =>
    value === undefined ? [] : [sql`${sql.literal(column)} = ${value}`]

  it("after concurrent writes of every kind, every list and filter combination counts what the table holds", async () => {
    const worker = platform.instance.runtime.runFork(runDeliveryWorker())
    let replies = 0
    receiver.reply = () => (++replies % 3 === 0 ? { status: 500, body: "no" } : { status: 200, body: "ok" })
    const subscribe = (event_types: ReadonlyArray<string>) =>
      platform.request("POST", "/v1/webhook-subscriptions", { body: { url: receiver.url, event_types } })
    const [all, transfers] = await Promise.all([
      subscribe(["wallet.created", "card.created", "card.updated"]),
      subscribe(["transfer.created", "transfer.settled"])
    ])
    expect(all.status, all.text).toBe(200)

    const wallets = await Promise.all(["A", "B", "C", "D"].map((name) => createWallet(platform, name)))
    const [a, b, c, d] = wallets.map((w) => w.financial_account_id) as [string, string, string, string]
    const tagWallet = (index: number, tag: string | null) =>
      platform.request("PATCH", `/v1/wallets/${wallets[index]!.id}`, { body: { tag } })
    for (const [index, tag] of [
      [0, "gold"],
      [1, "gold"],
      [2, "silver"]
    ] as const) {
      expect((await tagWallet(index, tag)).status).toBe(200)
    }
    await Promise.all([fund(platform, a, 1_000), fund(platform, b, 500)])
    const pending = await Promise.all(
      [c, d].map((to) => transfer(platform, { paymentRail: "ach_same_day", amount: 300, to_financial_account_id: to }))
    )
    const book = (from: string, to: string, amount: number) => ({
      paymentRail: "book",
      amount,
      currency: "USD",
      from_financial_account_id: from,
      to_financial_account_id: to
    })
    const cards = await Promise.all(
      wallets.slice(0, 3).map((w) => platform.request("POST", "/v1/cards", { body: { wallet_id: w.id, type: "VIRTUAL" } }))
    )
    await Promise.all([
      // Single transfers, some refused for funds.
      ...[
        [a, b, 100],
        [b, a, 50],
        [a, c, 2_000],
        [b, d, 10],
        [c, a, 5]
      ].map(([from, to, amount]) => transfer(platform, book(from as string, to as string, amount as number))),
      // A batch per item with refusals; an atomic batch refused whole; an atomic batch written.
      platform.request("POST", "/v1/transfers/batch", { body: { transfers: [book(a, b, 10), book(c, d, 9_999), book(b, c, 20)] } }),
      platform.request("POST", "/v1/transfers/batch", { body: { atomic: true, transfers: [book(a, d, 10), book(d, a, 9_999)] } }),
      platform.request("POST", "/v1/transfers/batch", { body: { atomic: true, transfers: [book(a, d, 15), book(b, d, 5)] } }),
      // Settles, card state changes, an authorization and a reveal (an audit record), a subscription disabled.
      ...pending.map((p) => platform.request("POST", `/v1/simulate/transfers/${p.body.id}/settle`)),
      platform.request("POST", `/v1/cards/${cards[0]!.body.id}/freeze`),
      platform.request("POST", `/v1/cards/${cards[1]!.body.id}/close`),
      platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: cards[2]!.body.id, amount: 100, mcc: "5411" } }),
      platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: cards[0]!.body.id, amount: 100, mcc: "5411" } }),
      platform.request("POST", `/v1/cards/${cards[2]!.body.id}/reveal`),
      platform.request("PATCH", `/v1/webhook-subscriptions/${transfers.body.id}`, { body: { disabled: true } }),
      // Wallet tags: a re-tag, a tag cleared, a tagged creation, a metadata change that keeps the tag.
      tagWallet(1, "silver"),
      tagWallet(2, null),
      platform.request("POST", "/v1/wallets", { body: { holder: { name: "E" }, tag: "gold" } }),
      platform.request("PATCH", `/v1/wallets/${wallets[0]!.id}`, { body: { metadata: { note: "kept gold" } } })
    ])
    // Each card message of a transaction, each of which counts its own rows on SQLite: a single
    // message with its transfer, a hold cleared (a transfer, the transaction updated), a hold
    // increased then reversed, a decline.
    const message = async (path: string, body: Record<string, unknown>) => {
      const response = await platform.request("POST", `/v1/simulate/${path}`, { body })
      expect(response.status, response.text).toBe(200)
      return response.body as { id: string; status: string }
    }
    const authorize = (amount: number, kind?: string) =>
      message("authorizations", { card_id: cards[2]!.body.id, amount, mcc: "5411", ...(kind === undefined ? {} : { kind }) })
    expect((await authorize(20, "FINANCIAL_AUTHORIZATION")).status).toBe("SETTLED")
    expect((await message(`transactions/${(await authorize(30)).id}/clearing`, {})).status).toBe("SETTLED")
    const increased = await authorize(10)
    await message(`transactions/${increased.id}/increment`, { amount: 5 })
    expect((await message(`transactions/${increased.id}/reversal`, {})).status).toBe("VOIDED")
    expect((await authorize(1_000_000)).status).toBe("DECLINED")
    await receiver.waitFor((received) => received.length >= 8)
    await platform.instance.runtime.runPromise(Fiber.interrupt(worker))

    const accounts = await distinct("issuing_financial_accounts", "id")
    const wrong = [
      ...(await mismatches("/v1/events", { type: await distinct("issuing_events", "type") }, "issuing_events", (sql, f) =>
        equal("type", f.type)(sql)
      )),
      ...(await mismatches(
        "/v1/transfers",
        {
          status: ["PENDING", "SETTLED"],
          payment_rail: await distinct("issuing_transfers", "payment_rail"),
          financial_account_id: accounts,
          transaction_id: [pending[0]!.body.transaction_id]
        },
        "issuing_transfers",
        (sql, f) => [
          ...equal("status", f.status)(sql),
          ...equal("payment_rail", f.payment_rail)(sql),
          ...equal("transaction_id", f.transaction_id)(sql),
          ...(f.financial_account_id === undefined
            ? []
            : [sql`(from_financial_account_id = ${f.financial_account_id} OR to_financial_account_id = ${f.financial_account_id})`])
        ]
      )),
      ...(await mismatches(
        "/v1/transactions",
        { status: await distinct("issuing_transactions", "status"), card_id: await distinct("issuing_transactions", "card_id") },
        "issuing_transactions",
        (sql, f) => [...equal("status", f.status)(sql), ...equal("card_id", f.card_id)(sql)]
      )),
      ...(await mismatches("/v1/wallets", { tag: ["gold", "silver", "bronze"] }, "issuing_wallets", (sql, f) => equal("tag", f.tag)(sql))),
      ...(await mismatches(
        "/v1/financial-accounts",
        { kind: ["wallet", "settlement"], wallet_id: [wallets[0]!.id], currency: ["USD", "EUR"] },
        "issuing_financial_accounts",
        (sql, f) => [...equal("kind", f.kind)(sql), ...equal("wallet_id", f.wallet_id)(sql), ...equal("currency", f.currency)(sql)]
      )),
      ...(await mismatches(
        "/v1/cards",
        { wallet_id: wallets.map((w) => w.id), state: ["ACTIVE", "FROZEN", "CLOSED"] },
        "issuing_cards",
        (sql, f) => [...equal("wallet_id", f.wallet_id)(sql), ...equal("state", f.state)(sql)]
      )),
      ...(await mismatches(
        "/v1/card-audit-records",
        { card_id: cards.map((card) => card.body.id), action: await distinct("issuing_card_audit_records", "action") },
        "issuing_card_audit_records",
        (sql, f) => [...equal("card_id", f.card_id)(sql), ...equal("action", f.action)(sql)]
      )),
      ...(await mismatches(
        "/v1/webhook-attempts",
        {
          webhook_subscription_id: [all.body.id, transfers.body.id],
          status: await distinct("issuing_webhook_attempts", "status"),
          event_id: (await distinct("issuing_webhook_attempts", "event_id")).slice(0, 2)
        },
        "issuing_webhook_attempts",
        (sql, f) => [
          ...equal("subscription_id", f.webhook_subscription_id)(sql),
          ...equal("status", f.status)(sql),
          ...equal("event_id", f.event_id)(sql)
        ]
      )),
      ...(await mismatches("/v1/webhook-subscriptions", { disabled: ["true", "false"] }, "issuing_webhook_subscriptions", (sql, f) =>
        f.disabled === undefined ? [] : [sql`disabled = ${f.disabled === "true" ? sql.literal("true") : sql.literal("false")}`]
      ))
    ]
    for (const account of accounts) {
      for (const filters of combinations({ book: ["principal", "cash"] })) {
        const response = await platform.request("GET", `/v1/financial-accounts/${account}/book-transfers?page_size=1${query(filters)}`)
        const counted = await sqlRows((sql) =>
          sql`SELECT COUNT(DISTINCT book_transfer_id) AS n FROM issuing_book_entries
              WHERE ${sql.and([sql`financial_account_id = ${account}`, ...equal("book", filters.book)(sql)])}`.pipe(
            Effect.map((rows) => Number(rows[0]!.n))
          )
        )
        if (response.body.total_count !== counted)
          wrong.push(`book transfers of ${account} ${JSON.stringify(filters)}: ${response.body.total_count} ≠ ${counted}`)
      }
    }
    expect(wrong).toEqual([])
    // The lists saw real data: refusals wrote nothing, the rest did.
    expect(await countOf("issuing_transfers", (sql) => [sql`status = 'PENDING'`])).toBe(0)
    expect(await countOf("issuing_webhook_attempts", () => [])).toBeGreaterThanOrEqual(8)
    expect(await countOf("issuing_cards", (sql) => [sql`state = 'FROZEN'`])).toBe(1)
    expect(await countOf("issuing_wallets", (sql) => [sql`tag = 'gold'`])).toBe(2)
    // And every count kept, of every program, is what the rows call for.
    expect(await sqlRows(() => maintainedListCounts)).toEqual(await sqlRows(() => expectedListCounts))
  }, 120_000)

  /** One write of rows the counts follow, straight through SQL; `rollback` undoes it after it ran. */
  type Write =
    | {
        readonly kind: "transfers"
        readonly rows: ReadonlyArray<readonly [number, number, number, number, number]>
        readonly rollback: boolean
      }
    | { readonly kind: "flip"; readonly offset: number; readonly rollback: boolean }
    | { readonly kind: "events"; readonly types: ReadonlyArray<number>; readonly rollback: boolean }
    | { readonly kind: "delete"; readonly offset: number; readonly rollback: boolean }
    | {
        readonly kind: "book"
        readonly entries: ReadonlyArray<readonly [number, number]>
        readonly split: boolean
        readonly rollback: boolean
      }
    | { readonly kind: "card"; readonly program: number; readonly state: number; readonly rollback: boolean }
    | { readonly kind: "state"; readonly offset: number; readonly state: number; readonly rollback: boolean }

  const STATUSES = ["PENDING", "SETTLED"]
  const RAILS = ["book", "ach_same_day", "wire"]
  const TYPES = ["transfer.created", "card.created", "wallet.created"]
  const BOOKS = ["principal", "cash"]
  const STATES = ["ACTIVE", "FROZEN", "CLOSED"]
  const write = fc.oneof(
    fc.record({
      kind: fc.constant("transfers" as const),
      rows: fc.array(fc.tuple(fc.nat(1), fc.nat(1), fc.nat(2), fc.nat(3), fc.nat(3)), { minLength: 1, maxLength: 4 }),
      rollback: fc.boolean()
    }),
    fc.record({ kind: fc.constant("flip" as const), offset: fc.nat(20), rollback: fc.boolean() }),
    fc.record({ kind: fc.constant("events" as const), types: fc.array(fc.nat(2), { minLength: 1, maxLength: 3 }), rollback: fc.boolean() }),
    fc.record({ kind: fc.constant("delete" as const), offset: fc.nat(10), rollback: fc.boolean() }),
    fc.record({
      kind: fc.constant("book" as const),
      entries: fc.array(fc.tuple(fc.nat(3), fc.nat(1)), { minLength: 1, maxLength: 4 }),
      split: fc.boolean(),
      rollback: fc.boolean()
    }),
    fc.record({ kind: fc.constant("card" as const), program: fc.nat(1), state: fc.nat(2), rollback: fc.boolean() }),
    fc.record({ kind: fc.constant("state" as const), offset: fc.nat(10), state: fc.nat(2), rollback: fc.boolean() })
  )

  it("property: after any concurrent writes, committed or rolled back, each count is what the rows call for", async () => {
    const other = await platform.createOrganization("Other")
    const programs = [platform.org.program_id, other.program_id]
    const keys = [platform.org.api_key, other.api_key]
    const wallets = await Promise.all(
      [0, 0, 1, 1].map(async (program) => {
        const response = await platform.request("POST", "/v1/wallets", {
          key: keys[program],
          program: programs[program],
          body: { holder: { name: "W", email: "w@example.com" } }
        })
        expect(response.status, response.text).toBe(200)
        return response.body as { id: string; financial_account_id: string }
      })
    )
    const now = new Date().toISOString()
    const statements = (sql: SqlClient.SqlClient, w: Write): Effect.Effect<void, unknown> => {
      switch (w.kind) {
        case "transfers":
          return Effect.forEach(w.rows, ([program, status, rail, from, to]) => {
            // Accounts of the transfer's own program (two per program).
            const a = wallets[program * 2 + (from % 2)]!.financial_account_id
            const b = wallets[program * 2 + (to % 2)]!.financial_account_id
            const transaction = newId()
            return Effect.zipRight(
              sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, created_at, updated_at)
                  VALUES (${transaction}, ${programs[program]!}, ${STATUSES[status]!}, 1, 'USD', ${now}, ${now})`,
              sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
                    from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
                  VALUES (${newId()}, ${programs[program]!}, ${transaction}, ${RAILS[rail]!}, 1, 'USD', ${a}, ${b}, ${STATUSES[status]!}, ${now}, ${now})`
            )
          }).pipe(Effect.asVoid)
        case "flip":
          return sql`UPDATE issuing_transfers SET status = CASE status WHEN 'PENDING' THEN 'SETTLED' ELSE 'PENDING' END
                     WHERE id IN (SELECT id FROM issuing_transfers ORDER BY id LIMIT 3 OFFSET ${w.offset})`.pipe(Effect.asVoid)
        case "events":
          return sql`INSERT INTO issuing_events ${sql.insert(
            w.types.map((type, i) => ({ id: newId(), program_id: programs[i % 2]!, type: TYPES[type]!, created_at: now, data: "{}" }))
          )}`.pipe(Effect.asVoid)
        case "delete":
          return sql`DELETE FROM issuing_events WHERE id IN (SELECT id FROM issuing_events
                     WHERE id NOT IN (SELECT event_id FROM issuing_webhook_deliveries) ORDER BY id LIMIT 2 OFFSET ${w.offset})`.pipe(
            Effect.asVoid
          )
        case "book":
          return Effect.gen(function* () {
            const [transaction, transferId, bookTransfer] = [newId(), newId(), newId()]
            const account = (i: number) => wallets[i]!.financial_account_id
            yield* sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, created_at, updated_at)
                       VALUES (${transaction}, ${programs[0]!}, 'SETTLED', 1, 'USD', ${now}, ${now})`
            yield* sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
                         from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
                       VALUES (${transferId}, ${programs[0]!}, ${transaction}, 'book', 1, 'USD', ${account(0)}, ${account(1)}, 'SETTLED', ${now}, ${now})`
            yield* sql`INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
                       VALUES (${bookTransfer}, ${programs[0]!}, ${transferId}, ${transaction}, 1, 'USD', ${now})`
            const rows = w.entries.map(([acct, book], position) => ({
              book_transfer_id: bookTransfer,
              position,
              financial_account_id: account(acct % 2),
              book: BOOKS[book]!,
              entry_type: position % 2 === 0 ? "DEBIT" : "CREDIT",
              amount_minor: 1,
              currency: "USD",
              posted_at: now
            }))
            // Entries of one book transfer in one statement, or over two (the later ones first).
            const groups = w.split && rows.length > 1 ? [rows.slice(rows.length >> 1), rows.slice(0, rows.length >> 1)] : [rows]
            for (const group of groups) yield* sql`INSERT INTO issuing_book_entries ${sql.insert(group)}`
          })
        case "card":
          return sql`INSERT INTO issuing_cards (id, program_id, wallet_id, financial_account_id, type, state, last_four, exp_month, exp_year,
                       pan_sealed, cvv_sealed, pan_fingerprint, vault_key_id, allowed_mcc_codes, blocked_mcc_codes, created_at, updated_at)
                     VALUES (${newId()}, ${programs[w.program]!}, ${wallets[w.program * 2]!.id}, ${wallets[w.program * 2]!.financial_account_id},
                       'VIRTUAL', ${STATES[w.state]!}, '4242', 1, 2030, 's', 's', ${newId()}, 'k', '[]', '[]', ${now}, ${now})`.pipe(
            Effect.asVoid
          )
        case "state":
          return sql`UPDATE issuing_cards SET state = ${STATES[w.state]!}
                     WHERE id IN (SELECT id FROM issuing_cards ORDER BY id LIMIT 2 OFFSET ${w.offset})`.pipe(Effect.asVoid)
      }
    }
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 12 }), async (writes) => {
        // Through the Transactor, as the platform writes: a deadlock between writers is retried.
        await sqlRows((sql) =>
          Effect.flatMap(Transactor, (transactor) =>
            Effect.forEach(
              writes,
              (w) =>
                w.rollback
                  ? transactor.withTransaction(Effect.zipRight(statements(sql, w), Effect.fail("rolled back" as const))).pipe(
                      Effect.catchIf(
                        (error) => error === "rolled back",
                        () => Effect.void
                      )
                    )
                  : transactor.withTransaction(statements(sql, w)),
              { concurrency: 4, discard: true }
            )
          )
        )
        expect(await sqlRows(() => maintainedListCounts)).toEqual(await sqlRows(() => expectedListCounts))
      }),
      { numRuns: 15 }
    )
  }, 180_000)
})
