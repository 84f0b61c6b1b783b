import { SqlClient } from "@effect/sql"
import { Access, MAX_AMOUNT_MINOR, MAX_TOTAL_MINOR } from "@issuing/core"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform, type TestResponse, uuid } from "../support/platform.js"
import { expectBooksBalance } from "./support.js"

/**
 * Property tests over random sequences of transfers on every rail, settlements and returns, over
 * HTTP, with a model of the ledger as its oracle (docs/ledger.md, posting rules, money and
 * returns): the model predicts every answer — posted (PENDING or SETTLED) or refused with which
 * code and param, in the order the posting checks them (sides, currency of each side, same account,
 * funds available — an inbound credit still PENDING is not —, then the 2^53 − 1 bound on every
 * running total the transfer touches); a settle or a return of a transfer posted before (409 when
 * it cannot apply; a return's reversal checks no funds, may take a wallet below zero and releases
 * a PENDING inbound credit's pending amount) — and each answer must equal the prediction; at the
 * end both books of every account (wallets and settlement accounts) must hold exactly the model's
 * totals, every wallet's pending balance the model's, and the transfers still PENDING and the
 * RETURNED ones must be the model's.
 *
 * Three ways of posting a scenario (groups of operations):
 * - single requests, each group sent concurrently (SQLite's group commit and PostgreSQL's row locks
 *   under contention): the answers of a group must be those of SOME order of its operations, found
 *   by trying the orders in the model; the model then moves on in that order;
 * - each group as one `POST /v1/transfers/batch` with per-item results: items in order;
 * - each group as one atomic batch: all items posted, or the first refused item's answer and nothing.
 * The first wallet and the USD settlement account start 9 × 10^15 in, so transfers at the 10^15 cap
 * cross 2^53 − 1 within a run and the refusal path is exercised (counted and asserted).
 */
const WALLETS = [{ currency: "USD" }, { currency: "USD" }, { currency: "USD" }, { currency: "EUR" }]

type Rail = "ach_same_day" | "wire" | "fednow_instant"
type Op =
  | { readonly kind: "book"; readonly from: number; readonly to: number; readonly amount: number; readonly currency: string }
  | { readonly kind: "in" | "out"; readonly rail: Rail; readonly wallet: number; readonly amount: number; readonly currency: string }
  /** A book transfer to an account id no program has. */
  | { readonly kind: "unknown"; readonly from: number; readonly amount: number; readonly currency: string }
  /** Settles one of the transfers posted so far (pending or not). */
  | { readonly kind: "settle"; readonly pick: number }
  /** The rail returns one of the transfers posted so far (any rail, any status: docs/ledger.md#returns). */
  | { readonly kind: "return"; readonly pick: number }
  /** A book transfer of the source's whole balance as the model knows it when sent, plus `extra`: funds checked at the edge. */
  | { readonly kind: "drain"; readonly from: number; readonly to: number; readonly extra: 0 | 1 }
type Sent = Exclude<Op, { readonly kind: "drain" }>
type TransferOp = Exclude<Sent, { readonly kind: "settle" | "return" }>
type OutcomeOp = Extract<Sent, { readonly kind: "settle" | "return" }>

// Mostly small amounts; some at the per-transfer cap, so running totals cross 2^53 − 1 within a run.
const amount = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 500 }), weight: 3 },
  { arbitrary: fc.constantFrom(MAX_AMOUNT_MINOR, MAX_AMOUNT_MINOR - 1), weight: 2 }
)
const currency = fc.constantFrom("USD", "USD", "USD", "EUR")
const wallet = fc.integer({ min: 0, max: WALLETS.length - 1 })
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("book" as const), from: wallet, to: wallet, amount, currency }), weight: 4 },
  {
    arbitrary: fc.record({
      kind: fc.constantFrom("in" as const, "out" as const),
      rail: fc.constantFrom("ach_same_day" as const, "wire" as const, "fednow_instant" as const),
      wallet,
      amount,
      currency
    }),
    weight: 4
  },
  { arbitrary: fc.record({ kind: fc.constant("unknown" as const), from: wallet, amount, currency }), weight: 1 },
  // Drains leave wallet 0 (9 × 10^15, above the per-transfer cap) alone: the others' balances are exact boundaries.
  {
    arbitrary: fc.record({
      kind: fc.constant("drain" as const),
      from: fc.integer({ min: 1, max: WALLETS.length - 1 }),
      to: wallet,
      extra: fc.constantFrom(0 as const, 0 as const, 1 as const)
    }),
    weight: 3
  },
  { arbitrary: fc.record({ kind: fc.constant("settle" as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("return" as const), pick: fc.nat() }), weight: 3 }
)
/** Operations in groups: run concurrently, or posted as one batch. */
const scenario = (groupSize: number) => fc.array(fc.array(op, { minLength: 1, maxLength: groupSize }), { minLength: 1, maxLength: 4 })
/**
 * Fixed seeds, so every refusal path is reached on every run of the suite (asserted below);
 * LEDGER_PROPERTY_SEED explores others (fast-check prints the seed of a failure). With returns
 * among the operations, 8 runs of seed 4 reach every path, returns posted included (7 a store);
 * the former 5 runs of 20261125 posted none.
 */
const SEED = process.env.LEDGER_PROPERTY_SEED === undefined ? 4 : Number(process.env.LEDGER_PROPERTY_SEED)
const RUNS = 8
/** What the seed gives each wallet but the first. */
const SMALL_SEED = 1_000

/** Running totals of one account's principal book (its cash book mirrors them: cash debits = principal credits). */
interface Totals {
  debits: number
  credits: number
  /** Posted but not available: inbound credits still PENDING on their rail (wallets only). */
  pending: number
}

/** A posted transfer as the model keeps it: what a settle or a return of it does. */
interface PostedOp {
  id: string
  status: "PENDING" | "SETTLED" | "RETURNED"
  /** The operation that posted it (the seed's transfers are inbound fednow_instant ones). */
  readonly operation: TransferOp
}

/** What an operation answers, as compared: "200 PENDING", "422 insufficient_funds amount", "409 conflict" … */
type Outcome = string

/** The ledger as the rules of docs/ledger.md describe it: accounts' totals and transfers' statuses. */
interface Model {
  readonly wallets: ReadonlyArray<Totals & { readonly currency: string }>
  readonly settlement: Record<string, Totals>
  /** Posted transfers in order: their id once known, their status and what posted them. */
  readonly transfers: Array<PostedOp>
}

const cloneModel = (model: Model): Model => ({
  wallets: model.wallets.map((w) => ({ ...w })),
  settlement: Object.fromEntries(Object.entries(model.settlement).map(([k, v]) => [k, { ...v }])),
  transfers: model.transfers.map((t) => ({ ...t }))
})

const refusal = (code: string, param: string): Outcome => `422 ${code} ${param}`
const fits = (total: number, amount: number) => total + amount <= MAX_TOTAL_MINOR

/**
 * The refusal of a transfer by the rules that need no balance, in the rules' order: each named
 * side's currency (from first), an unknown account, the same account on both sides.
 */
const ruleRefusal = (operation: TransferOp): Outcome | null => {
  if (operation.kind === "book" || operation.kind === "unknown") {
    if (WALLETS[operation.from]!.currency !== operation.currency) return refusal("currency_mismatch", "currency")
    if (operation.kind === "unknown") return "404 not_found to_financial_account_id"
    if (WALLETS[operation.to]!.currency !== operation.currency) return refusal("currency_mismatch", "currency")
    if (operation.from === operation.to) return refusal("same_financial_account", "to_financial_account_id")
    return null
  }
  return WALLETS[operation.wallet]!.currency === operation.currency ? null : refusal("currency_mismatch", "currency")
}

/**
 * The predicted outcome of a transfer on `model`, applying it when it posts: the rules above, then
 * the source wallet's funds, then the bound on every total it would move.
 */
const applyTransfer = (model: Model, operation: TransferOp): Outcome => {
  const refused = ruleRefusal(operation)
  if (refused !== null) return refused
  if (operation.kind === "unknown") throw new Error("unreachable: an unknown account is always refused")
  model.settlement[operation.currency] ??= { debits: 0, credits: 0, pending: 0 }
  const settlement = model.settlement[operation.currency]!
  if (operation.kind === "book")
    return move(model.wallets[operation.from]!, model.wallets[operation.to]!, operation.amount, true, "SETTLED")
  const account = model.wallets[operation.wallet]!
  const status = operation.rail === "fednow_instant" ? "SETTLED" : "PENDING"
  if (operation.kind === "out") return move(account, settlement, operation.amount, true, status)
  const outcome = move(settlement, account, operation.amount, false, status)
  // An inbound credit PENDING on its rail is posted but not available until it settles.
  if (outcome === "200 PENDING") account.pending += operation.amount
  return outcome
}

/** What a wallet may pay: posted, less what is pending. */
const available = (totals: Totals) => totals.credits - totals.debits - totals.pending

const move = (from: Totals, to: Totals, amount: number, checkFunds: boolean, status: PostedOp["status"]): Outcome => {
  if (checkFunds && available(from) < amount) return refusal("insufficient_funds", "amount")
  if (!fits(from.debits, amount) || !fits(to.credits, amount)) return refusal("balance_limit_exceeded", "amount")
  from.debits += amount
  to.credits += amount
  return `200 ${status}`
}

/** The wallet and the settlement account an external-rail transfer moved between, inbound or not. */
const sidesOf = (model: Model, operation: Extract<TransferOp, { readonly kind: "in" | "out" }>) => ({
  wallet: model.wallets[operation.wallet]!,
  settlement: model.settlement[operation.currency]!
})

/** A settle's predicted outcome: a PENDING transfer settles (an inbound credit becomes available); any other is 409. */
const applySettle = (model: Model, index: number): Outcome => {
  const target = model.transfers[index]!
  if (target.status !== "PENDING") return "409 conflict"
  target.status = "SETTLED"
  const operation = target.operation
  if (operation.kind === "in") sidesOf(model, operation).wallet.pending -= operation.amount
  return "200 SETTLED"
}

/**
 * A return's predicted outcome (docs/ledger.md#returns): only an ach_same_day or wire transfer not
 * returned yet (409 otherwise); its reversal moves the amount back without a funds check, within
 * the 2^53 − 1 bound, and a PENDING inbound credit's pending amount is released.
 */
const applyReturn = (model: Model, index: number): Outcome => {
  const target = model.transfers[index]!
  const operation = target.operation
  if (operation.kind !== "in" && operation.kind !== "out") return "409 conflict"
  if (operation.rail === "fednow_instant" || target.status === "RETURNED") return "409 conflict"
  const { settlement, wallet } = sidesOf(model, operation)
  const moved =
    operation.kind === "in"
      ? move(wallet, settlement, operation.amount, false, "RETURNED")
      : move(settlement, wallet, operation.amount, false, "RETURNED")
  if (moved !== "200 RETURNED") return moved
  if (operation.kind === "in" && target.status === "PENDING") wallet.pending -= operation.amount
  target.status = "RETURNED"
  return moved
}

/** A settle's or a return's predicted outcome. */
const applyOutcome = (model: Model, operation: OutcomeOp, index: number): Outcome =>
  operation.kind === "settle" ? applySettle(model, index) : applyReturn(model, index)

/** The return code of a transfer's rail (a wire's is its bank's text). */
const returnBody = (operation: TransferOp) => ({
  return_code: operation.kind !== "book" && operation.kind !== "unknown" && operation.rail === "wire" ? "Beneficiary unknown" : "R03"
})

/** The outcome a single request answered, in the model's terms. */
const outcomeOf = (response: TestResponse): Outcome =>
  response.status === 200
    ? `200 ${response.body.status}`
    : response.status === 422
      ? refusal(response.body.error.code, response.body.error.param)
      : `${response.status} ${response.body?.error?.code}${response.status === 404 ? ` ${response.body.error.param}` : ""}`

describe.each(STORE_KINDS)("ledger properties on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const run = <A, E>(effect: Effect.Effect<A, E, any>) => platform.instance.runtime.runPromise(effect as Effect.Effect<A, E, never>)

  const checkInvariants = () => expectBooksBalance(platform)

  /** Answers by kind over the three modes (the tests of one file run in order). */
  const reached = new Map<string, number>()
  type Mode = "concurrent single requests" | "per-item batches" | "atomic batches"
  it.each<Mode>(["concurrent single requests", "per-item batches", "atomic batches"])(
    "answers every transfer as the model predicts, and ends with the model's balances, posted as %s",
    async (mode) => {
      const seen = new Map<string, number>()
      // Answers by kind: posted, or refused with which status and code.
      const count = (outcome: Outcome) => {
        const key = outcome.startsWith("200") ? "200" : outcome.split(" ").slice(0, 2).join(" ")
        seen.set(key, (seen.get(key) ?? 0) + 1)
        // Returns posted are counted on their own too: the reversal path was exercised.
        if (outcome === "200 RETURNED") seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
      }
      await fc.assert(
        // An atomic batch is refused whole by any one item: smaller groups, so some of them post.
        fc.asyncProperty(scenario(mode === "atomic batches" ? 2 : 5), async (groups) => {
          const org = await run(Effect.flatMap(Access, (access) => access.createOrganization("property")))
          const as = { key: org.api_key, program: org.program_id }
          const request = (method: string, path: string, body?: unknown) => platform.request(method, path, { ...as, body })
          const accounts: Array<string> = []
          for (const w of WALLETS) {
            const created = await request("POST", "/v1/wallets", { holder: { name: "Holder" }, currency: w.currency })
            expect(created.status, created.text).toBe(200)
            accounts.push(created.body.financial_account_id)
          }
          // 9 × 10^15 into the first wallet (and so out of the USD settlement account), in one batch.
          const seed = await request("POST", "/v1/transfers/batch", {
            atomic: true,
            transfers: [
              ...Array.from({ length: 9 }, () => ({
                payment_rail: "fednow_instant",
                amount: MAX_AMOUNT_MINOR,
                currency: "USD",
                to_financial_account_id: accounts[0]
              })),
              // The others start with a little, so drains meet their exact balances.
              ...WALLETS.slice(1).map((w, index) => ({
                payment_rail: "fednow_instant",
                amount: SMALL_SEED,
                currency: w.currency,
                to_financial_account_id: accounts[index + 1]
              }))
            ]
          })
          expect(seed.status, seed.text).toBe(200)
          let model: Model = {
            wallets: WALLETS.map((w) => ({ currency: w.currency, debits: 0, credits: SMALL_SEED, pending: 0 })),
            settlement: { USD: { debits: 9 * MAX_AMOUNT_MINOR, credits: 0, pending: 0 }, EUR: { debits: 0, credits: 0, pending: 0 } },
            // The seed's transfers settled at once: settling or returning one is refused (409).
            transfers: seed.body.data.map((t: any, index: number) => ({
              id: t.id,
              status: "SETTLED",
              operation: {
                kind: "in",
                rail: "fednow_instant",
                wallet: index < 9 ? 0 : index - 8,
                amount: t.amount,
                currency: t.currency
              }
            }))
          }
          model.wallets[0]!.credits = 9 * MAX_AMOUNT_MINOR
          for (const w of WALLETS.slice(1)) model.settlement[w.currency]!.debits += SMALL_SEED

          const body = (operation: TransferOp) =>
            operation.kind === "book"
              ? {
                  payment_rail: "book",
                  amount: operation.amount,
                  currency: operation.currency,
                  from_financial_account_id: accounts[operation.from],
                  to_financial_account_id: accounts[operation.to]
                }
              : operation.kind === "unknown"
                ? {
                    paymentRail: "book",
                    amount: operation.amount,
                    currency: operation.currency,
                    from_financial_account_id: accounts[operation.from],
                    to_financial_account_id: uuid()
                  }
                : {
                    payment_rail: operation.rail,
                    amount: operation.amount,
                    currency: operation.currency,
                    [operation.kind === "in" ? "to_financial_account_id" : "from_financial_account_id"]: accounts[operation.wallet]
                  }
          // A settle or a return names a transfer posted before its group (ids are known only once
          // answered): one it applies to when there is one (a settle a PENDING transfer, a return an
          // ACH or wire transfer not returned yet) — half the settles, three returns in four, as
          // those transfers are few —, else any transfer.
          const appliesTo = (kind: OutcomeOp["kind"], t: PostedOp) =>
            kind === "settle"
              ? t.status === "PENDING"
              : t.status !== "RETURNED" &&
                (t.operation.kind === "in" || t.operation.kind === "out") &&
                t.operation.rail !== "fednow_instant"
          const targetOf = (operation: OutcomeOp) => {
            const candidates = model.transfers.flatMap((t, index) => (appliesTo(operation.kind, t) ? [index] : []))
            const aimed = operation.kind === "settle" ? operation.pick % 2 === 0 : operation.pick % 4 !== 0
            if (aimed && candidates.length > 0) return candidates[(operation.pick >> 2) % candidates.length]!
            return operation.pick % model.transfers.length
          }
          /** The network's settle or return of the model's transfer `target`. */
          const sendOutcome = (operation: OutcomeOp, target: number) => {
            const posted = model.transfers[target]!
            return operation.kind === "settle"
              ? request("POST", `/v1/simulate/transfers/${posted.id}/settle`)
              : request("POST", `/v1/network/transfers/${posted.id}/return`, returnBody(posted.operation))
          }
          const isOutcome = (operation: Sent): operation is OutcomeOp => operation.kind === "settle" || operation.kind === "return"
          const expectOutcome = (actual: Outcome, predicted: Outcome, what: unknown) => {
            expect(actual, JSON.stringify(what)).toBe(predicted)
            count(actual)
          }

          // A drain becomes the book transfer it names over the model before its group (at most the cap).
          const concrete = (operation: Op): Sent => {
            if (operation.kind !== "drain") return operation
            const from = model.wallets[operation.from]!
            const amount = Math.max(1, Math.min(MAX_AMOUNT_MINOR, available(from) + operation.extra))
            return { kind: "book", from: operation.from, to: operation.to, amount, currency: from.currency }
          }

          for (const drawn of groups) {
            const group = drawn.map(concrete)
            if (mode === "concurrent single requests") {
              const sent = group.map((operation) => {
                if (!isOutcome(operation)) return { operation, target: null, response: request("POST", "/v1/transfers", body(operation)) }
                const target = targetOf(operation)
                return { operation, target, response: sendOutcome(operation, target) }
              })
              const answered = await Promise.all(sent.map(async (x) => ({ ...x, response: await x.response })))
              // Some order of the group must give exactly these answers; the model continues in it.
              const explain = (state: Model, left: ReadonlyArray<(typeof answered)[number]>): Model | null => {
                if (left.length === 0) return state
                for (const candidate of left) {
                  const next = cloneModel(state)
                  const { operation } = candidate
                  const predicted = isOutcome(operation) ? applyOutcome(next, operation, candidate.target!) : applyTransfer(next, operation)
                  if (predicted !== outcomeOf(candidate.response)) continue
                  if (!isOutcome(operation) && candidate.response.status === 200) {
                    next.transfers.push({ id: candidate.response.body.id, status: candidate.response.body.status, operation })
                  }
                  const found = explain(
                    next,
                    left.filter((other) => other !== candidate)
                  )
                  if (found !== null) return found
                }
                return null
              }
              const explained = explain(model, answered)
              const answers = answered.map((x) => ({ op: x.operation, answer: outcomeOf(x.response) }))
              expect(explained, `no order of the group explains ${JSON.stringify(answers)}`).not.toBeNull()
              model = explained!
              for (const x of answered) count(outcomeOf(x.response))
            } else {
              // Settles and returns first, one by one, then the group's transfers as one batch.
              for (const operation of group) {
                if (!isOutcome(operation)) continue
                const target = targetOf(operation)
                const response = await sendOutcome(operation, target)
                expectOutcome(outcomeOf(response), applyOutcome(model, operation, target), operation)
              }
              const transfers = group.filter((operation): operation is TransferOp => !isOutcome(operation))
              if (transfers.length === 0) continue
              const response = await request("POST", "/v1/transfers/batch", {
                atomic: mode === "atomic batches",
                transfers: transfers.map(body)
              })
              if (mode === "per-item batches") {
                expect(response.status, response.text).toBe(200)
                transfers.forEach((operation, index) => {
                  const item = response.body.data[index]
                  const predicted = applyTransfer(model, operation)
                  // An item's error carries no HTTP status: its code and param are what is compared.
                  const actual =
                    item.error === undefined ? `200 ${item.status}` : `${predicted.split(" ")[0]} ${item.error.code} ${item.error.param}`
                  expectOutcome(actual, predicted, operation)
                  if (item.error === undefined) model.transfers.push({ id: item.id, status: item.status, operation })
                })
              } else {
                // Every item is checked against the rules that need no balance before any is posted
                // (docs/ledger.md#batches): the first item they refuse answers, whatever an earlier
                // item's funds; otherwise the first item the posting refuses, in order.
                const attempt = cloneModel(model)
                const ruled = transfers.findIndex((operation) => ruleRefusal(operation) !== null)
                const predictions = ruled === -1 ? transfers.map((operation) => applyTransfer(attempt, operation)) : []
                const failing = ruled !== -1 ? ruled : predictions.findIndex((p) => !p.startsWith("200"))
                if (failing === -1) {
                  expect(response.status, response.text).toBe(200)
                  expect(response.body.data.map((item: any) => `200 ${item.status}`)).toEqual(predictions)
                  model = attempt
                  response.body.data.forEach((item: any, index: number) => {
                    model.transfers.push({ id: item.id, status: item.status, operation: transfers[index]! })
                  })
                  predictions.forEach(count)
                } else {
                  // The first refused item answers for the batch, its param prefixed with its index.
                  const [status, code, param] = (ruled !== -1 ? ruleRefusal(transfers[ruled]!)! : predictions[failing]!).split(" ")
                  expectOutcome(
                    `${response.status} ${response.body?.error?.code} ${response.body?.error?.param}`,
                    `${status} ${code} transfers.${failing}.${param}`,
                    transfers
                  )
                }
              }
            }
          }

          // Both books of every account hold exactly the model's totals (the cash book mirrors principal).
          const expectTotals = async (accountId: string, totals: Totals) => {
            const books = await request("GET", `/v1/financial-accounts/${accountId}/balances`)
            expect(books.status, books.text).toBe(200)
            expect(books.body.data.map((b: any) => [b.book, b.debits.amount, b.credits.amount, b.balance.amount])).toEqual([
              ["principal", totals.debits, totals.credits, totals.credits - totals.debits],
              ["cash", totals.credits, totals.debits, totals.credits - totals.debits]
            ])
          }
          for (const [index, id] of accounts.entries()) {
            await expectTotals(id, model.wallets[index]!)
            // What is pending: inbound credits neither settled nor returned.
            const account = (await request("GET", `/v1/financial-accounts/${id}`)).body
            expect(account.pending_balance.amount).toBe(model.wallets[index]!.pending)
          }
          const settlements = await request("GET", "/v1/financial-accounts?kind=settlement")
          expect(settlements.body.data.map((a: any) => a.currency).sort()).toEqual(
            Object.entries(model.settlement)
              .filter(([, t]) => t.debits + t.credits > 0)
              .map(([c]) => c)
              .sort()
          )
          for (const account of settlements.body.data) await expectTotals(account.id, model.settlement[account.currency]!)
          for (const status of ["PENDING", "RETURNED"] as const) {
            const listed = await request("GET", `/v1/transfers?status=${status}&page_size=100`)
            expect(listed.body.data.map((t: any) => t.id).sort()).toEqual(
              model.transfers
                .filter((t) => t.status === status)
                .map((t) => t.id)
                .sort()
            )
          }
        }),
        { numRuns: RUNS, seed: SEED }
      )
      await checkInvariants()
      // The runs posted transfers and had some refused (every kind of answer is asserted reached below).
      expect(seen.get("200") ?? 0).toBeGreaterThan(0)
      expect([...seen.keys()].some((key) => key !== "200")).toBe(true)
      for (const [key, n] of seen) reached.set(key, (reached.get(key) ?? 0) + n)
    }
  )

  it("reached every kind of answer over the modes: each refusal path was exercised, not just possible", () => {
    for (const outcome of [
      "200",
      "200 RETURNED",
      "422 insufficient_funds",
      "422 balance_limit_exceeded",
      "422 currency_mismatch",
      "422 same_financial_account",
      "404 not_found",
      "409 conflict"
    ]) {
      expect(reached.get(outcome) ?? 0, outcome).toBeGreaterThan(0)
    }
  })

  it("refuses to update or delete posted entries", async () => {
    await expect(run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE issuing_book_entries SET amount_minor = 1`))).rejects.toThrow()
    await expect(run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM issuing_book_transfers`))).rejects.toThrow()
  })
})
