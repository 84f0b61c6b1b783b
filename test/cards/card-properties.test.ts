import { Access } from "@issuing/core"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform, type TestResponse } from "../support/platform.js"
import { expectBooksBalance } from "../ledger/support.js"

/**
 * Property tests of card transactions with holds (docs/card-transactions.md), over HTTP on both
 * stores: random sequences of authorizations (both kinds, some declined by merchant category,
 * spending limits — on amounts and on counts, per window and per transaction — or funds),
 * increments, clearings (partial, over, `final: false` then final, late after a void or an
 * expiry), reversals, returns, expiries, disputes and their outcomes (WON, LOST) and ordinary
 * transfers (book, inbound and outbound ACH — PENDING until settled — and FedNow, and their
 * settles), one step at a time.
 *
 * A model of the ledger predicts every answer (status, the transaction's status and amounts, the
 * decline reason or the error code), and after every step, read over HTTP and independently of the
 * model:
 * - every wallet account's `available_balance` = `balance` − `pending_balance`;
 * - `pending_balance` = the `pending_amount` of its PENDING card transactions + its inbound
 *   transfers still PENDING; the program's balances sum to zero (every posting is between its accounts);
 * - every card transaction's `settled_amount` = its approved CLEARING (and FINANCIAL_AUTHORIZATION,
 *   which clears as it authorizes) − RETURN card events, its
 *   `authorized_amount` its approved authorizations and increments, and no hold once it is closed;
 * - the books balance (the ledger's invariants, test/ledger/support.ts);
 * - every limit of every card reads (GET /v1/cards/{id}/spend-limits) the spent and remaining
 *   amount and count the model holds;
 * - every transaction's `disputed_amount` is what the model's disputes claimed, and never more
 *   than it ever cleared; each dispute credited exactly what was disputable or asked;
 * - a wallet's available balance goes down into the negative only through a clearing or a lost
 *   dispute (its provisional credit taken back);
 * - the newest `balance.updated` of every wallet account equals the account read now, and the newest
 *   `transaction.updated` of every transaction equals the transaction read now.
 */

/** The card transaction messages and transfers a step may be. */
type Op =
  | {
      readonly op: "authorize"
      readonly card: number
      readonly amount: number
      readonly financial: boolean
      readonly blockedMcc: boolean
    }
  | { readonly op: "increment"; readonly pick: number; readonly amount: number }
  /** `share` of a base amount (the hold, or what was authorized and not cleared): null sends no amount. */
  | { readonly op: "clearing"; readonly pick: number; readonly share: number | null; readonly final: boolean | null }
  | { readonly op: "reversal" | "return"; readonly pick: number; readonly share: number | null }
  | { readonly op: "expire"; readonly pick: number }
  | { readonly op: "book"; readonly from: number; readonly amount: number }
  | { readonly op: "in" | "out"; readonly wallet: number; readonly pending: boolean; readonly amount: number }
  | { readonly op: "settle"; readonly pick: number }
  /** A dispute of `share` of what is disputable (null: the default, all of it). */
  | { readonly op: "dispute"; readonly pick: number; readonly share: number | null }
  | { readonly op: "resolve"; readonly pick: number; readonly outcome: "WON" | "LOST" }

interface Limit {
  readonly interval: "PER_TRANSACTION" | "YEARLY" | "ALL_TIME"
  readonly amount: number | null
  readonly count: number | null
}

const BLOCKED_MCC = "7995"
/** Cards by wallet: card 0 and 1 on wallet 0, card 2 on wallet 1. */
const CARD_WALLET = [0, 0, 1] as const
/**
 * Each card's spending limits: none on card 0; an amount for all time and a count per year on card
 * 1; an amount and a count per year and an amount per transaction on card 2. (YEARLY, not a shorter
 * window: a run never crosses its end but at New Year's midnight.)
 */
const CARD_LIMITS: ReadonlyArray<ReadonlyArray<Limit>> = [
  [],
  [
    { interval: "ALL_TIME", amount: 800, count: null },
    { interval: "YEARLY", amount: null, count: 4 }
  ],
  [
    { interval: "YEARLY", amount: 1_200, count: 3 },
    { interval: "PER_TRANSACTION", amount: 450, count: null }
  ]
]
const SEEDED = [2_000, 500] as const

const pick = fc.nat({ max: 1_000 })
const share = fc.option(fc.constantFrom(0.5, 1, 1.5, 4), { nil: null })
const step: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant("authorize" as const),
      card: fc.integer({ min: 0, max: CARD_WALLET.length - 1 }),
      amount: fc.integer({ min: 1, max: 900 }),
      financial: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
      blockedMcc: fc.integer({ min: 0, max: 7 }).map((n) => n === 0)
    }),
    weight: 6
  },
  { arbitrary: fc.record({ op: fc.constant("increment" as const), pick, amount: fc.integer({ min: 1, max: 400 }) }), weight: 2 },
  {
    arbitrary: fc.record({ op: fc.constant("clearing" as const), pick, share, final: fc.constantFrom(null, true, false) }),
    weight: 5
  },
  { arbitrary: fc.record({ op: fc.constantFrom("reversal" as const, "return" as const), pick, share }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant("expire" as const), pick }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant("book" as const),
      from: fc.integer({ min: 0, max: 1 }),
      amount: fc.integer({ min: 1, max: 700 })
    }),
    weight: 2
  },
  {
    arbitrary: fc.record({
      op: fc.constantFrom("in" as const, "out" as const),
      wallet: fc.integer({ min: 0, max: 1 }),
      pending: fc.boolean(),
      amount: fc.integer({ min: 1, max: 600 })
    }),
    weight: 3
  },
  { arbitrary: fc.record({ op: fc.constant("settle" as const), pick }), weight: 2 },
  {
    arbitrary: fc.record({ op: fc.constant("dispute" as const), pick, share: fc.option(fc.constantFrom(0.5, 1, 2), { nil: null }) }),
    weight: 2
  },
  {
    arbitrary: fc.record({ op: fc.constant("resolve" as const), pick, outcome: fc.constantFrom("WON" as const, "LOST" as const) }),
    weight: 2
  }
)

const authorize = (card: number, amount: number, blockedMcc = false): Op => ({
  op: "authorize",
  card,
  amount,
  financial: false,
  blockedMcc
})
/**
 * One sequence written out, run before the random ones, that walks the rarer paths on purpose (a
 * pick ≡ 2 mod 3 names transaction `pick % count`): a partial clearing keeping its hold, a clearing
 * four times the rest of the hold that takes the wallet below zero, a decline for funds, a pending
 * inbound credit and its settle, a declined increment past the spending period, a void then a late
 * presentment, a return, an expiry and a second one (409), a reversal over the hold (422), an
 * increment, a second settle (409), a partial clearing releasing the rest, a blocked merchant
 * category, a dispute lost and one won, a second resolution (409), a dispute of nothing left
 * (422), and card 2's limits: one transaction's amount, then its yearly count.
 */
const WALKTHROUGH: ReadonlyArray<Op> = [
  authorize(0, 1_000),
  { op: "clearing", pick: 2, share: 0.5, final: false },
  { op: "clearing", pick: 2, share: 4, final: null },
  authorize(0, 100),
  { op: "in", wallet: 0, pending: true, amount: 3_000 },
  { op: "settle", pick: 0 },
  authorize(1, 600),
  { op: "increment", pick: 2, amount: 300 },
  { op: "reversal", pick: 2, share: null },
  { op: "clearing", pick: 2, share: null, final: null },
  { op: "return", pick: 2, share: 0.5 },
  authorize(2, 200),
  { op: "expire", pick: 11 },
  { op: "expire", pick: 11 },
  authorize(0, 400),
  { op: "reversal", pick: 14, share: 4 },
  { op: "increment", pick: 14, amount: 50 },
  { op: "settle", pick: 0 },
  { op: "clearing", pick: 14, share: 0.5, final: null },
  authorize(0, 10, true),
  { op: "dispute", pick: 0, share: 0.5 },
  { op: "resolve", pick: 0, outcome: "LOST" },
  { op: "dispute", pick: 0, share: null },
  { op: "resolve", pick: 1, outcome: "WON" },
  { op: "resolve", pick: 1, outcome: "LOST" },
  { op: "dispute", pick: 0, share: 2 },
  { op: "dispute", pick: 0, share: 1 },
  authorize(2, 500),
  authorize(2, 100),
  authorize(2, 100),
  authorize(2, 50),
  authorize(2, 50)
]

/** Fixed seed, so every path asserted reached below is reached; CARD_PROPERTY_SEED explores others. */
const SEED = process.env.CARD_PROPERTY_SEED === undefined ? 20_261_125 : Number(process.env.CARD_PROPERTY_SEED)
const RUNS = 6
const STEPS = { minLength: 15, maxLength: 30 }

interface ModelWallet {
  balance: number
  pending: number
}
interface ModelTransaction {
  readonly id: string
  readonly card: number
  status: string
  authorized: number
  pending: number
  settled: number
  disputed: number
}
interface ModelDispute {
  readonly id: string
  readonly wallet: number
  readonly amount: number
  status: "SUBMITTED" | "WON" | "LOST"
}
interface ModelTransfer {
  readonly id: string
  pending: boolean
  /** The wallet an inbound transfer credits (its pending credit until it settles), else null. */
  readonly inbound: number | null
  readonly amount: number
}
interface Model {
  readonly wallets: Array<ModelWallet>
  readonly transactions: Array<ModelTransaction>
  readonly transfers: Array<ModelTransfer>
  readonly disputes: Array<ModelDispute>
}

const available = (w: ModelWallet) => w.balance - w.pending
/** What a card's windows spend (every transaction of a run is in the current YEARLY window): its open holds and settled amounts. */
const spentAmount = (model: Model, card: number) =>
  model.transactions.filter((t) => t.card === card).reduce((sum, t) => sum + t.pending + t.settled, 0)
/** What a card's windows count: its approved authorizations not released whole (neither VOIDED nor EXPIRED). */
const spentCount = (model: Model, card: number) =>
  model.transactions.filter((t) => t.card === card && (t.status === "PENDING" || t.status === "SETTLED")).length

/**
 * Which of the card's limits approving `amount` more would pass, on a transaction that authorized
 * `authorizedBefore` (a new one: 0, and it counts): "per transaction", "amount", "count", or null.
 */
const overLimit = (model: Model, card: number, authorizedBefore: number, amount: number, isNew: boolean) => {
  for (const limit of CARD_LIMITS[card]!) {
    if (limit.interval === "PER_TRANSACTION") {
      if (authorizedBefore + amount > limit.amount!) return "per transaction"
      continue
    }
    if (limit.amount !== null && spentAmount(model, card) + amount > limit.amount) return "amount"
    if (limit.count !== null && isNew && spentCount(model, card) + 1 > limit.count) return "count"
  }
  return null
}

/** What the platform answers, in the model's terms. */
type Predicted =
  | { readonly status: 200; readonly transaction: Omit<ModelTransaction, "id" | "card">; readonly decline: string | null }
  | { readonly status: 200; readonly transfer: "PENDING" | "SETTLED" }
  | { readonly status: 200; readonly dispute: "SUBMITTED" | "WON" | "LOST"; readonly amount: number }
  | { readonly status: 409 }
  | { readonly status: 422; readonly code: string }

const stateOf = (t: ModelTransaction) => ({ status: t.status, authorized: t.authorized, pending: t.pending, settled: t.settled })

/** What GET /v1/cards/{id}/spend-limits should answer for a card of the model. */
const expectedLimits = (model: Model, card: number) =>
  CARD_LIMITS[card]!.map((limit) => {
    const perTransaction = limit.interval === "PER_TRANSACTION"
    const amount = perTransaction ? null : spentAmount(model, card)
    const count = perTransaction || limit.count === null ? null : spentCount(model, card)
    return {
      interval: limit.interval,
      amount: limit.amount,
      count: limit.count,
      spent_amount: amount,
      spent_count: count,
      remaining_amount: limit.amount === null ? null : Math.max(0, limit.amount - (amount ?? 0)),
      remaining_count: limit.count === null ? null : Math.max(0, limit.count - (count ?? 0))
    }
  })

const statusAfterRelease = (t: ModelTransaction, closed: "VOIDED" | "EXPIRED") =>
  t.pending > 0 ? "PENDING" : t.settled > 0 ? "SETTLED" : closed

describe.each(STORE_KINDS)("card transaction properties on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  /** Answers by message and outcome over the runs ("clearing 200", "reversal 422 amount_exceeds_pending" …). */
  const reached = new Map<string, number>()

  it("answers every message as the model predicts and keeps balances, holds, settled amounts, books and events true after every step", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, STEPS), async (steps) => {
        const org = await platform.instance.runtime.runPromise(
          Effect.flatMap(Access, (access) => access.createOrganization("card properties"))
        )
        const request = (method: string, path: string, body?: unknown) =>
          platform.request(method, path, { key: org.api_key, program: org.program_id, body })
        const ok = async (method: string, path: string, body?: unknown) => {
          const response = await request(method, path, body)
          expect(response.status, `${method} ${path}: ${response.text}`).toBe(200)
          return response.body
        }
        /** Every item of a list, walked by starting_after. */
        const all = async (path: string): Promise<Array<any>> => {
          const items: Array<any> = []
          for (;;) {
            const after = items.length === 0 ? "" : `&starting_after=${items.at(-1).id}`
            const page = await ok("GET", `${path}${path.includes("?") ? "&" : "?"}page_size=100${after}`)
            items.push(...page.data)
            if (page.data.length < 100) return items
          }
        }

        const wallets: Array<{ id: string; financial_account_id: string }> = []
        for (const _ of SEEDED) wallets.push(await ok("POST", "/v1/wallets", { holder: { name: "Holder" } }))
        const accounts = wallets.map((w) => w.financial_account_id)
        for (const [index, amount] of SEEDED.entries())
          await ok("POST", "/v1/transfers", {
            payment_rail: "fednow_instant",
            amount,
            currency: "USD",
            to_financial_account_id: accounts[index]
          })
        const cards: Array<string> = []
        for (const [index, walletIndex] of CARD_WALLET.entries()) {
          const card = await ok("POST", "/v1/cards", {
            wallet_id: wallets[walletIndex]!.id,
            type: "VIRTUAL",
            blocked_mcc_codes: [BLOCKED_MCC],
            spending_limits: CARD_LIMITS[index]
          })
          cards.push(card.id)
        }
        const model: Model = {
          wallets: SEEDED.map((amount) => ({ balance: amount, pending: 0 })),
          transactions: [],
          transfers: [],
          disputes: []
        }

        /**
         * The transaction a message names: two picks in three one it can apply to when there is one
         * (an open hold; for a return, one with money settled; for a clearing, every other time one
         * closed after approval — a late presentment or a further clearing), the third any.
         */
        const targetOf = (op: Op["op"], pickValue: number): ModelTransaction | undefined => {
          const fits = (t: ModelTransaction) =>
            op === "dispute"
              ? t.settled - t.disputed > 0
              : op === "return"
                ? t.settled > 0
                : op === "clearing" && pickValue % 3 === 1
                  ? t.status === "SETTLED" || t.status === "VOIDED" || t.status === "EXPIRED"
                  : t.status === "PENDING"
          const preferred = pickValue % 3 === 2 ? [] : model.transactions.filter(fits)
          if (preferred.length > 0) return preferred[Math.floor(pickValue / 3) % preferred.length]
          return model.transactions[pickValue % Math.max(1, model.transactions.length)]
        }

        /** Predicts a step's answer on the model and applies it (the ids of new objects are filled in after). */
        const predict = (operation: Op): { predicted: Predicted; apply: (body: any) => void; note?: string } | null => {
          const none = () => undefined
          const nothing = (predicted: Predicted) => ({ predicted, apply: none })
          switch (operation.op) {
            case "authorize": {
              const walletIndex = CARD_WALLET[operation.card]!
              const wallet = model.wallets[walletIndex]!
              const kindOf = operation.financial ? "FINANCIAL_AUTHORIZATION" : "AUTHORIZATION"
              const over = operation.blockedMcc ? null : overLimit(model, operation.card, 0, operation.amount, true)
              const decline = operation.blockedMcc
                ? "MCC_BLOCKED"
                : over !== null
                  ? "SPENDING_LIMIT_EXCEEDED"
                  : available(wallet) < operation.amount
                    ? "INSUFFICIENT_FUNDS"
                    : null
              const amount = operation.amount
              const after =
                decline !== null
                  ? { status: "DECLINED", authorized: amount, pending: 0, settled: 0 }
                  : kindOf === "FINANCIAL_AUTHORIZATION"
                    ? { status: "SETTLED", authorized: amount, pending: 0, settled: amount }
                    : { status: "PENDING", authorized: amount, pending: amount, settled: 0 }
              return {
                predicted: { status: 200, transaction: after, decline },
                ...(over === null ? {} : { note: `declined by its ${over} limit` }),
                apply: (body) => {
                  model.transactions.push({ id: body.id, card: operation.card, ...after, disputed: 0 })
                  if (decline !== null) return
                  wallet.pending += after.pending
                  wallet.balance -= after.settled
                }
              }
            }
            case "book":
            case "in":
            case "out": {
              const source = operation.op === "book" ? operation.from : operation.op === "out" ? operation.wallet : null
              if (source !== null && available(model.wallets[source]!) < operation.amount)
                return nothing({ status: 422, code: "insufficient_funds" })
              const pending = operation.op !== "book" && operation.pending
              return {
                predicted: { status: 200, transfer: pending ? "PENDING" : "SETTLED" },
                apply: (body) => {
                  const inbound = operation.op === "in" ? operation.wallet : null
                  if (operation.op === "book") {
                    model.wallets[operation.from]!.balance -= operation.amount
                    model.wallets[1 - operation.from]!.balance += operation.amount
                  } else if (operation.op === "out") model.wallets[operation.wallet]!.balance -= operation.amount
                  else {
                    model.wallets[operation.wallet]!.balance += operation.amount
                    if (pending) model.wallets[operation.wallet]!.pending += operation.amount
                  }
                  model.transfers.push({ id: body.id, pending, inbound, amount: operation.amount })
                }
              }
            }
            case "resolve": {
              const d = model.disputes[operation.pick % Math.max(1, model.disputes.length)]
              if (d === undefined) return null
              if (d.status !== "SUBMITTED") return nothing({ status: 409 })
              return {
                predicted: { status: 200, dispute: operation.outcome, amount: d.amount },
                note: operation.outcome,
                apply: () => {
                  d.status = operation.outcome
                  // A lost dispute takes its provisional credit back (the wallet may go below zero).
                  if (operation.outcome === "LOST") model.wallets[d.wallet]!.balance -= d.amount
                }
              }
            }
            case "settle": {
              const target = model.transfers[operation.pick % Math.max(1, model.transfers.length)]
              if (target === undefined) return null
              if (!target.pending) return nothing({ status: 409 })
              return {
                predicted: { status: 200, transfer: "SETTLED" },
                apply: () => {
                  target.pending = false
                  if (target.inbound !== null) model.wallets[target.inbound]!.pending -= target.amount
                }
              }
            }
          }
          const t = targetOf(operation.op, operation.pick)
          if (t === undefined) return null
          const wallet = model.wallets[CARD_WALLET[t.card]!]!
          const withNote = <A extends object>(note: string, a: A) => ({ ...a, note })
          const answer = (after: Omit<ModelTransaction, "id" | "card">, decline: string | null, move: () => void) => ({
            predicted: { status: 200 as const, transaction: after, decline },
            apply: () => {
              move()
              Object.assign(t, after)
            }
          })
          switch (operation.op) {
            case "dispute": {
              if (t.status === "DECLINED") return nothing({ status: 422, code: "transaction_not_disputable" })
              const disputable = Math.max(0, t.settled - t.disputed)
              const amount = operation.share === null ? disputable : Math.max(1, Math.round(disputable * operation.share))
              if (amount > disputable || amount <= 0) return nothing({ status: 422, code: "amount_exceeds_disputable" })
              return {
                predicted: { status: 200, dispute: "SUBMITTED", amount },
                note: amount === disputable ? "all that was disputable" : "part",
                apply: (body: any) => {
                  t.disputed += amount
                  wallet.balance += amount
                  model.disputes.push({ id: body.id, wallet: CARD_WALLET[t.card]!, amount, status: "SUBMITTED" })
                }
              }
            }
            case "increment": {
              if (t.status !== "PENDING") return nothing({ status: 409 })
              const over = overLimit(model, t.card, t.authorized, operation.amount, false)
              const decline = over !== null ? "SPENDING_LIMIT_EXCEEDED" : available(wallet) < operation.amount ? "INSUFFICIENT_FUNDS" : null
              if (over !== null) return withNote(`declined by its ${over} limit`, answer(stateOf(t), decline, none))
              if (decline !== null) return answer(stateOf(t), decline, none)
              return answer(
                { ...stateOf(t), authorized: t.authorized + operation.amount, pending: t.pending + operation.amount },
                null,
                () => {
                  wallet.pending += operation.amount
                }
              )
            }
            case "clearing": {
              if (t.status === "DECLINED") return nothing({ status: 409 })
              const fallback = t.status === "PENDING" ? t.pending : t.status === "SETTLED" ? 0 : t.authorized - t.settled
              const base = t.status === "PENDING" ? t.pending : Math.max(t.authorized - t.settled, 100)
              const amount = operation.share === null ? fallback : Math.max(1, Math.round(base * operation.share))
              if (amount <= 0) return nothing({ status: 409 })
              const release = operation.final === false ? Math.min(amount, t.pending) : t.pending
              const pending = t.pending - release
              const note =
                t.status === "VOIDED" || t.status === "EXPIRED"
                  ? "late, after a void or an expiry"
                  : amount > t.pending
                    ? "over the hold"
                    : pending > 0
                      ? "partial, hold kept"
                      : amount < t.pending
                        ? "partial, rest released"
                        : "whole"
              return withNote(
                note,
                answer(
                  { status: pending > 0 ? "PENDING" : "SETTLED", authorized: t.authorized, pending, settled: t.settled + amount },
                  null,
                  () => {
                    wallet.pending -= release
                    wallet.balance -= amount
                  }
                )
              )
            }
            case "reversal": {
              if (t.status !== "PENDING") return nothing({ status: 409 })
              const amount = operation.share === null ? t.pending : Math.max(1, Math.round(t.pending * operation.share))
              if (amount > t.pending) return nothing({ status: 422, code: "amount_exceeds_pending" })
              const after = { ...stateOf(t), pending: t.pending - amount }
              return answer({ ...after, status: statusAfterRelease({ ...t, ...after }, "VOIDED") }, null, () => {
                wallet.pending -= amount
              })
            }
            case "return": {
              if (t.status === "DECLINED") return nothing({ status: 409 })
              const amount = operation.share === null ? t.settled : Math.max(1, Math.round(t.settled * operation.share))
              if (amount > t.settled || amount <= 0) return nothing({ status: 422, code: "amount_exceeds_settled" })
              return answer({ ...stateOf(t), settled: t.settled - amount }, null, () => {
                wallet.balance += amount
              })
            }
            case "expire": {
              if (t.status !== "PENDING") return nothing({ status: 409 })
              return answer({ ...stateOf(t), pending: 0, status: statusAfterRelease({ ...t, pending: 0 }, "EXPIRED") }, null, () => {
                wallet.pending -= t.pending
              })
            }
          }
        }

        /** The request a step sends (amounts computed as `predict` computes them). */
        const send = (operation: Op): Promise<TestResponse> => {
          switch (operation.op) {
            case "authorize":
              return request("POST", "/v1/simulate/authorizations", {
                card_id: cards[operation.card],
                amount: operation.amount,
                mcc: operation.blockedMcc ? BLOCKED_MCC : "5411",
                merchant_name: "Corner Shop",
                kind: operation.financial ? "FINANCIAL_AUTHORIZATION" : "AUTHORIZATION"
              })
            case "book":
              return request("POST", "/v1/transfers", {
                payment_rail: "book",
                amount: operation.amount,
                currency: "USD",
                from_financial_account_id: accounts[operation.from],
                to_financial_account_id: accounts[1 - operation.from]
              })
            case "in":
            case "out":
              return request("POST", "/v1/transfers", {
                payment_rail: operation.pending ? "ach_same_day" : "fednow_instant",
                amount: operation.amount,
                currency: "USD",
                [operation.op === "in" ? "to_financial_account_id" : "from_financial_account_id"]: accounts[operation.wallet]
              })
            case "settle":
              return request("POST", `/v1/simulate/transfers/${model.transfers[operation.pick % model.transfers.length]!.id}/settle`)
            case "resolve":
              return request("POST", `/v1/simulate/disputes/${model.disputes[operation.pick % model.disputes.length]!.id}/resolve`, {
                outcome: operation.outcome
              })
          }
          const t = targetOf(operation.op, operation.pick)!
          const path = `/v1/simulate/transactions/${t.id}/${operation.op}`
          switch (operation.op) {
            case "dispute": {
              const disputable = Math.max(0, t.settled - t.disputed)
              return request("POST", "/v1/disputes", {
                transaction_id: t.id,
                reason: "FRAUD",
                ...(operation.share === null ? {} : { amount: Math.max(1, Math.round(disputable * operation.share)) })
              })
            }
            case "increment":
              return request("POST", path, { amount: operation.amount })
            case "clearing": {
              const base = t.status === "PENDING" ? t.pending : Math.max(t.authorized - t.settled, 100)
              return request("POST", path, {
                ...(operation.share === null ? {} : { amount: Math.max(1, Math.round(base * operation.share)) }),
                ...(operation.final === null ? {} : { final: operation.final })
              })
            }
            case "reversal":
              return request("POST", path, operation.share === null ? {} : { amount: Math.max(1, Math.round(t.pending * operation.share)) })
            case "return":
              return request("POST", path, operation.share === null ? {} : { amount: Math.max(1, Math.round(t.settled * operation.share)) })
            case "expire":
              return request("POST", `/v1/transactions/${t.id}/expire`)
          }
        }

        /** Every invariant of the header, read over HTTP (and the books over SQL). */
        const checkState = async (label: string) => {
          const accountList = await all("/v1/financial-accounts")
          expect(
            accountList.reduce((sum, a) => sum + a.balance.amount, 0),
            label
          ).toBe(0)
          const transactions = (await all("/v1/transactions")).filter((t) => t.card_id !== null)
          const pendingTransfers = await all("/v1/transfers?status=PENDING")
          const current = new Map<string, any>()
          for (const [index, id] of accounts.entries()) {
            const account = accountList.find((a) => a.id === id)
            current.set(id, account)
            expect(account.available_balance.amount, `${label}: available = balance − pending`).toBe(
              account.balance.amount - account.pending_balance.amount
            )
            const holds = transactions
              .filter((t) => t.status === "PENDING" && CARD_WALLET[cards.indexOf(t.card_id)] === index)
              .reduce((sum, t) => sum + t.pending_amount, 0)
            const inbound = pendingTransfers.filter((t) => t.to_financial_account_id === id).reduce((sum, t) => sum + t.amount, 0)
            expect(account.pending_balance.amount, `${label}: pending = open holds + pending inbound credits`).toBe(holds + inbound)
            const w = model.wallets[index]!
            expect([account.balance.amount, account.pending_balance.amount], `${label}: the model's wallet ${index}`).toEqual([
              w.balance,
              w.pending
            ])
          }
          for (const t of transactions) {
            current.set(t.id, t)
            const approved = (types: ReadonlyArray<string>) =>
              t.card_events
                .filter((e: any) => e.result === "APPROVED" && types.includes(e.type))
                .reduce((sum: number, e: any) => sum + e.amount, 0)
            expect(t.settled_amount, `${label}: settled = cleared − returned (${t.id})`).toBe(
              approved(["CLEARING", "FINANCIAL_AUTHORIZATION"]) - approved(["RETURN"])
            )
            if (t.status !== "DECLINED")
              expect(t.authorized_amount, `${label}: authorized (${t.id})`).toBe(
                approved(["AUTHORIZATION", "FINANCIAL_AUTHORIZATION", "INCREMENTAL_AUTHORIZATION"])
              )
            if (t.status !== "PENDING") expect(t.pending_amount, `${label}: no hold once closed (${t.id})`).toBe(0)
            else expect(t.pending_amount, `${label}: an open hold (${t.id})`).toBeGreaterThan(0)
            // No dispute claims more than cleared: what the model's disputes claimed, within what ever settled.
            const modelled = model.transactions.find((m) => m.id === t.id)
            expect(t.disputed_amount, `${label}: disputed (${t.id})`).toBe(modelled?.disputed ?? 0)
            expect(t.disputed_amount, `${label}: disputed within cleared (${t.id})`).toBeLessThanOrEqual(
              approved(["CLEARING", "FINANCIAL_AUTHORIZATION"])
            )
          }
          // Every limit's spend and what remains, as the model counts them.
          for (const [index, id] of cards.entries()) {
            if (CARD_LIMITS[index]!.length === 0) continue
            const limits = (await ok("GET", `/v1/cards/${id}/spend-limits`)).data.map(
              ({ object, window_start, window_end, ...rest }: any) => rest
            )
            expect(limits, `${label}: the spend limits of card ${index}`).toEqual(expectedLimits(model, index))
          }
          await expectBooksBalance(platform)
          // The newest event of each object describes it as it is now.
          const newest = new Map<string, any>()
          for (const event of await all("/v1/events")) {
            const described = event.type === "balance.updated" || event.type === "transaction.updated"
            if (described && !newest.has(event.data.object.id)) newest.set(event.data.object.id, event.data.object)
          }
          for (const [id, object] of newest) {
            if (current.has(id)) expect(object, `${label}: the newest event of ${id}`).toEqual(current.get(id))
          }
          for (const id of accounts) expect(newest.has(id), `${label}: balance.updated for ${id}`).toBe(true)
          for (const t of transactions) expect(newest.has(t.id), `${label}: transaction.updated for ${t.id}`).toBe(true)
          return new Map(accounts.map((id) => [id, current.get(id).available_balance.amount as number]))
        }

        let availableBefore = await checkState("after the seed")
        for (const [index, operation] of steps.entries()) {
          const prediction = predict(operation)
          if (prediction === null) continue
          const response = await send(operation)
          const label = `step ${index} ${JSON.stringify(operation)}`
          const { predicted } = prediction
          expect(response.status, `${label}: ${response.text}`).toBe(predicted.status)
          const outcome =
            predicted.status === 422
              ? `422 ${predicted.code}`
              : predicted.status === 200 && "transaction" in predicted && predicted.decline !== null
                ? `200 ${predicted.decline}`
                : `${predicted.status}`
          for (const key of [
            `${operation.op} ${outcome}`,
            ...(prediction.note === undefined ? [] : [`${operation.op} ${prediction.note}`])
          ])
            reached.set(key, (reached.get(key) ?? 0) + 1)
          if (predicted.status === 422)
            expect([response.body.error.code, response.body.error.param], label).toEqual([
              predicted.code,
              predicted.code === "transaction_not_disputable" ? "transaction_id" : "amount"
            ])
          if (predicted.status === 200 && "dispute" in predicted)
            expect([response.body.status, response.body.amount], label).toEqual([predicted.dispute, predicted.amount])
          if (predicted.status === 200 && "transaction" in predicted) {
            const t = response.body
            expect(
              { status: t.status, authorized: t.authorized_amount, pending: t.pending_amount, settled: t.settled_amount },
              label
            ).toEqual(predicted.transaction)
            // A message after the authorization never declines the transaction itself (a declined increment is only its card event).
            expect(t.decline_reason, label).toBe(operation.op === "authorize" ? predicted.decline : null)
            const last = t.card_events.at(-1)
            expect([last.result, last.decline_reason], label).toEqual(
              predicted.decline === null ? ["APPROVED", null] : ["DECLINED", predicted.decline]
            )
          }
          if (predicted.status === 200 && "transfer" in predicted) expect(response.body.status, label).toBe(predicted.transfer)
          prediction.apply(response.body)
          const availableAfter = await checkState(label)
          // Only a clearing (the merchant has been paid) or a lost dispute may take a wallet's available balance down below zero.
          if ([...availableAfter.values()].some((amount) => amount < 0)) reached.set("available below zero", 1)
          if (operation.op !== "clearing" && operation.op !== "resolve") {
            for (const [id, after] of availableAfter) {
              const before = availableBefore.get(id)!
              if (after < before) expect(after, `${label}: available of ${id} went from ${before} below zero`).toBeGreaterThanOrEqual(0)
            }
          }
          availableBefore = availableAfter
        }
      }),
      // The walkthrough is one of the runs.
      { numRuns: RUNS + 1, seed: SEED, examples: [[[...WALKTHROUGH]]] }
    )
  }, 240_000)

  it("reached every kind of message and answer: approvals, each decline, each refusal, over-clearing and late presentments", () => {
    for (const outcome of [
      "authorize 200",
      "authorize 200 MCC_BLOCKED",
      "authorize 200 SPENDING_LIMIT_EXCEEDED",
      "authorize declined by its amount limit",
      "authorize declined by its count limit",
      "authorize declined by its per transaction limit",
      "increment declined by its amount limit",
      "dispute 200",
      "dispute all that was disputable",
      "dispute part",
      "dispute 422 amount_exceeds_disputable",
      "resolve WON",
      "resolve LOST",
      "resolve 409",
      "authorize 200 INSUFFICIENT_FUNDS",
      "increment 200",
      "increment 409",
      "clearing 200",
      "clearing 409",
      "clearing over the hold",
      "clearing partial, hold kept",
      "clearing partial, rest released",
      "clearing late, after a void or an expiry",
      "reversal 200",
      "reversal 409",
      "reversal 422 amount_exceeds_pending",
      "return 200",
      "return 422 amount_exceeds_settled",
      "expire 200",
      "expire 409",
      "book 200",
      "out 422 insufficient_funds",
      "in 200",
      "settle 200",
      "settle 409",
      "available below zero"
    ]) {
      expect(reached.get(outcome) ?? 0, `${outcome} (reached: ${JSON.stringify([...reached])})`).toBeGreaterThan(0)
    }
  })
})
