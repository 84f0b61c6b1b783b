import { SqlClient } from "@effect/sql"
import { Access, CardStore, windowKey, windowStart } from "@issuing/core"
import { expectedSpendTotals, maintainedSpendTotals } from "@issuing/core/testing"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { type ServedPlatform, servePlatform, startPlatform, TEST_VAULT_KEY, type TestPlatform } from "../support/platform.js"

/**
 * A card's spending limits read maintained totals (docs/card-transactions.md#running-totals):
 * `issuing_card_spend_totals`, kept by triggers per card, interval and window. Over HTTP on both
 * stores, random sequences of authorizations (both kinds), increments, clearings (partial, over,
 * `final: false`, late), reversals, returns and expiries on cards of every windowed interval, sent
 * through platforms whose clocks run ahead of each other (`clockOffsetMs`, as the hold-expiry test
 * moves time) so that the sequence crosses the day, week, month and year boundaries. After every
 * step:
 * - the maintained rows equal the rows' sums and counts per card, interval and window;
 * - for every card and every interval, the window's spend read by `windowSpend` at the
 *   sending platform's clock equals the SUM over the card's transactions created in the window
 *   (what the spending period summed before the maintained total);
 * - every authorization and increment is decided as that SUM decides it: declined
 *   SPENDING_LIMIT_EXCEEDED exactly when the SUM plus the amount passes the card's limit (the
 *   wallet holds enough that no other control declines).
 */

const DAY_MS = 86_400_000
/** The platforms' clocks: now, then ahead past a day, a week, a month and a year. */
const OFFSETS_MS = [0, 1 * DAY_MS, 8 * DAY_MS, 40 * DAY_MS, 400 * DAY_MS] as const
const INTERVALS = ["DAILY", "WEEKLY", "MONTHLY", "YEARLY", "ALL_TIME"] as const
const LIMIT = 900
const FUNDS = 10_000_000
const SETTINGS = { rateLimitPerSecond: 100_000, rateLimitBurst: 100_000 }

type Op =
  | { readonly op: "authorize"; readonly card: number; readonly amount: number; readonly financial: boolean }
  | { readonly op: "increment"; readonly pick: number; readonly amount: number }
  | { readonly op: "clearing"; readonly pick: number; readonly share: number | null; readonly final: boolean }
  | { readonly op: "reversal" | "return"; readonly pick: number; readonly share: number | null }
  | { readonly op: "expire"; readonly pick: number }
  /** The next messages go through the next platform, whose clock is further ahead. */
  | { readonly op: "later" }

const pick = fc.nat({ max: 1_000 })
const share = fc.option(fc.constantFrom(0.5, 1, 2), { nil: null })
const step: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant("authorize" as const),
      card: fc.integer({ min: 0, max: INTERVALS.length - 1 }),
      amount: fc.integer({ min: 1, max: 700 }),
      financial: fc.integer({ min: 0, max: 3 }).map((n) => n === 0)
    }),
    weight: 6
  },
  { arbitrary: fc.record({ op: fc.constant("increment" as const), pick, amount: fc.integer({ min: 1, max: 500 }) }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant("clearing" as const), pick, share, final: fc.boolean() }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constantFrom("reversal" as const, "return" as const), pick, share }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant("expire" as const), pick }), weight: 1 },
  { arbitrary: fc.constant({ op: "later" as const }), weight: 2 }
)

/** Fixed seed; CARD_SPEND_SEED explores others. */
const SEED = process.env.CARD_SPEND_SEED === undefined ? 20_261_126 : Number(process.env.CARD_SPEND_SEED)
const RUNS = 6
const STEPS = { minLength: 10, maxLength: 25 }

interface Seen {
  readonly id: string
  readonly card: number
  status: string
  authorized: number
  pending: number
  settled: number
}

describe.each(STORE_KINDS)("a card's maintained spend on %s", (kind) => {
  let platform: TestPlatform
  const ahead: Array<ServedPlatform> = []
  beforeAll(async () => {
    platform = await startPlatform(kind, SETTINGS)
    for (const offsetMs of OFFSETS_MS.slice(1))
      ahead.push(await servePlatform(platform.database, [TEST_VAULT_KEY], SETTINGS, { clockOffsetMs: offsetMs }))
  }, 120_000)
  afterAll(async () => {
    for (const served of ahead) await served.close()
    await platform?.close()
  })

  const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient | CardStore>) =>
    platform.instance.runtime.runPromise(effect as Effect.Effect<A, unknown, never>)

  /** What the spending period summed before the maintained total: the card's transactions created in the window. */
  const summedOverRows = (cardId: string, start: Date | null) =>
    run(
      Effect.gen(function* () {
        const sql = (yield* SqlClient.SqlClient).withoutTransforms()
        const [row] =
          start === null
            ? yield* sql`SELECT COALESCE(SUM(pending_minor + settled_minor), 0) AS spent FROM issuing_transactions WHERE card_id = ${cardId}`
            : yield* sql`SELECT COALESCE(SUM(pending_minor + settled_minor), 0) AS spent FROM issuing_transactions
                         WHERE card_id = ${cardId} AND created_at >= ${start.toISOString()}`
        return Number(row!.spent)
      })
    )

  it("keeps every window's total equal to the SUM over the card's transactions, and decides as that SUM decides", async () => {
    const reached = new Map<string, number>()
    await fc.assert(
      fc.asyncProperty(fc.array(step, STEPS), async (steps) => {
        const org = await run(Effect.flatMap(Access, (access) => access.createOrganization("card spend")))
        const baseUrls = [platform.baseUrl, ...ahead.map((served) => served.baseUrl)]
        let clock = 0
        const request = async (method: string, path: string, body?: unknown) => {
          const response = await fetch(`${baseUrls[clock]}${path}`, {
            method,
            headers: { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id, "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body)
          })
          const text = await response.text()
          return { status: response.status, text, body: text === "" ? undefined : JSON.parse(text) }
        }
        const ok = async (method: string, path: string, body?: unknown) => {
          const response = await request(method, path, body)
          expect(response.status, `${method} ${path}: ${response.text}`).toBe(200)
          return response.body
        }
        const wallet = await ok("POST", "/v1/wallets", { holder: { name: "Fleet" } })
        await ok("POST", "/v1/transfers", {
          payment_rail: "fednow_instant",
          amount: FUNDS,
          currency: "USD",
          to_financial_account_id: wallet.financial_account_id
        })
        const cards: Array<string> = []
        for (const interval of INTERVALS)
          cards.push(
            (await ok("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL", spending_period: { interval, amount: LIMIT } })).id
          )
        const seen: Array<Seen> = []
        const record = (body: any, card: number) => {
          const existing = seen.find((t) => t.id === body.id)
          const state = {
            status: body.status,
            authorized: body.authorized_amount,
            pending: body.pending_amount,
            settled: body.settled_amount
          }
          if (existing === undefined) seen.push({ id: body.id, card, ...state })
          else Object.assign(existing, state)
        }
        const nowMs = () => Date.now() + OFFSETS_MS[clock]!

        /**
         * Sends an authorization or increment of `amount` on card `card`, and asserts it was decided
         * as the SUM over the rows decides it (unless a UTC midnight passed while it was sent).
         */
        const decided = async (card: number, amount: number, send: () => Promise<{ status: number; text: string; body: any }>) => {
          const interval = INTERVALS[card]!
          const start = windowStart(interval, nowMs())
          const spent = await summedOverRows(cards[card]!, start)
          const response = await send()
          const after = windowStart(interval, nowMs())
          return { response, expectDecline: spent + amount > LIMIT, sameWindow: start?.getTime() === after?.getTime() }
        }

        for (const operation of steps) {
          if (operation.op === "later") {
            clock = Math.min(clock + 1, OFFSETS_MS.length - 1)
            reached.set(`later ${clock}`, (reached.get(`later ${clock}`) ?? 0) + 1)
            continue
          }
          let outcome: string
          if (operation.op === "authorize") {
            const { response, expectDecline, sameWindow } = await decided(operation.card, operation.amount, () =>
              request("POST", "/v1/simulate/authorizations", {
                card_id: cards[operation.card],
                amount: operation.amount,
                mcc: "5411",
                kind: operation.financial ? "FINANCIAL_AUTHORIZATION" : "AUTHORIZATION"
              })
            )
            expect(response.status, response.text).toBe(200)
            if (sameWindow)
              expect(response.body.decline_reason, `authorization of ${operation.amount}`).toBe(
                expectDecline ? "SPENDING_LIMIT_EXCEEDED" : null
              )
            record(response.body, operation.card)
            outcome = `authorize ${response.body.status}`
          } else {
            const t = seen[operation.pick % Math.max(1, seen.length)]
            if (t === undefined) continue
            const path = `/v1/simulate/transactions/${t.id}/${operation.op}`
            const amountOf = (base: number, s: number | null) => (s === null ? undefined : Math.max(1, Math.round(base * s)))
            let response: { status: number; text: string; body: any }
            if (operation.op === "increment") {
              const result = await decided(t.card, operation.amount, () => request("POST", path, { amount: operation.amount }))
              response = result.response
              if (response.status === 200 && result.sameWindow) {
                const last = response.body.card_events.at(-1)
                expect(last.decline_reason, `increment of ${operation.amount}`).toBe(
                  result.expectDecline ? "SPENDING_LIMIT_EXCEEDED" : null
                )
              }
            } else if (operation.op === "expire") response = await request("POST", `/v1/transactions/${t.id}/expire`)
            else {
              const base =
                operation.op === "return" ? t.settled : operation.op === "reversal" || t.pending > 0 ? t.pending : t.authorized - t.settled
              const amount = amountOf(Math.max(base, 1), operation.share)
              const body = operation.op === "clearing" ? { amount, final: operation.final } : { amount }
              response = await request("POST", path, body)
            }
            expect([200, 409, 422], `${operation.op}: ${response.text}`).toContain(response.status)
            if (response.status === 200) record(response.body, t.card)
            outcome =
              operation.op === "increment" && response.status === 200
                ? `increment ${response.body.card_events.at(-1).result}`
                : `${operation.op} ${response.status}`
          }
          reached.set(outcome, (reached.get(outcome) ?? 0) + 1)

          // The maintained rows of this run's cards, and every window of every card at this clock.
          const mine = (rows: ReadonlyArray<{ card_id: string }>) => rows.filter((row) => cards.includes(row.card_id))
          expect(mine(await run(maintainedSpendTotals))).toEqual(mine(await run(expectedSpendTotals)))
          for (const cardId of cards)
            for (const interval of INTERVALS) {
              const start = windowStart(interval, nowMs())
              const maintained = await run(
                Effect.map(
                  Effect.flatMap(CardStore, (store) => store.windowSpend(cardId, [{ interval, window: windowKey(interval, nowMs()) }])),
                  (rows) => rows[0]?.spent_minor ?? 0
                )
              )
              if (start?.getTime() === windowStart(interval, nowMs())?.getTime())
                expect(maintained, `${interval} window of card ${cards.indexOf(cardId)}`).toBe(await summedOverRows(cardId, start))
            }
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true }
    )
    // The sequences reached the limit and every kind of message.
    const outcomes = ["authorize DECLINED", "authorize PENDING", "authorize SETTLED", "increment DECLINED", "increment APPROVED"]
    for (const outcome of [...outcomes, "clearing 200", "reversal 200", "return 200", "expire 200", `later ${OFFSETS_MS.length - 1}`])
      expect(reached.get(outcome) ?? 0, `${outcome} in ${JSON.stringify([...reached])}`).toBeGreaterThan(0)
  }, 600_000)

  it("stays exact under concurrent messages on one card: authorizations, clearings, returns and reversals at once", async () => {
    const org = await run(Effect.flatMap(Access, (access) => access.createOrganization("card spend, concurrent")))
    const request = (path: string, body: unknown) => platform.request("POST", path, { key: org.api_key, program: org.program_id, body })
    const wallet = await request("/v1/wallets", { holder: { name: "Fleet" } })
    await request("/v1/transfers", {
      payment_rail: "fednow_instant",
      amount: FUNDS,
      currency: "USD",
      to_financial_account_id: wallet.body.financial_account_id
    })
    const card = await request("/v1/cards", {
      wallet_id: wallet.body.id,
      type: "VIRTUAL",
      spending_period: { interval: "ALL_TIME", amount: 1e9 }
    })
    const authorize = (kind: string) => request("/v1/simulate/authorizations", { card_id: card.body.id, amount: 100, mcc: "5411", kind })
    // Settled ones to return and holds to clear or reverse, then all of it at once with new authorizations.
    const settled = await Promise.all(Array.from({ length: 8 }, () => authorize("FINANCIAL_AUTHORIZATION")))
    const held = await Promise.all(Array.from({ length: 8 }, () => authorize("AUTHORIZATION")))
    const answers = await Promise.all([
      ...settled.map((t) => request(`/v1/simulate/transactions/${t.body.id}/return`, { amount: 40 })),
      ...held.map((t, i) => request(`/v1/simulate/transactions/${t.body.id}/${i % 2 === 0 ? "clearing" : "reversal"}`, { amount: 30 })),
      ...Array.from({ length: 8 }, () => authorize("AUTHORIZATION"))
    ])
    for (const answer of [...settled, ...held, ...answers]) expect(answer.status, answer.text).toBe(200)
    const mine = (rows: ReadonlyArray<{ card_id: string }>) => rows.filter((row) => row.card_id === card.body.id)
    const maintained = mine(await run(maintainedSpendTotals))
    expect(maintained).toEqual(mine(await run(expectedSpendTotals)))
    // 8 × 100 settled less 8 × 40 returned; 8 holds of 100: 4 cleared for 30 (the rest released), 4
    // with 30 reversed (70 held); 8 new holds of 100.
    const allTime = maintained.find((row) => row.interval === "ALL_TIME")
    expect(allTime?.spent_minor).toBe(8 * 60 + 4 * 30 + 4 * 70 + 8 * 100)
    // Every authorization approved and none released whole: 24 counted.
    expect(allTime?.spent_count).toBe(24)
  }, 120_000)
})
