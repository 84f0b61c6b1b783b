import { SqlError } from "@effect/sql"
import { Data, Effect, Either, Option } from "effect"
import { nowIso } from "../platform/Time.js"
import { type LedgerDeps, noCard, type Posted, postPrepared, postsAtOnce, prepare, refused, type TransferError, write } from "./Posting.js"
import { accountsToRead, type PreparedTransfer, type TransferOrder, transferPosting } from "./PrepareTransfer.js"

/**
 * Many transfers in one request and one database transaction (POST /v1/transfers/batch,
 * docs/ledger.md#batches): the accounts warmed in one read and every item prepared before the
 * write. When every item posts at once (the usual batch: transfers between known accounts, each
 * its new transaction), the write is ONE store call (`postNewTransfers`), all-or-nothing by
 * itself, committed like a single transfer — on SQLite a unit of the group commit, sharing one
 * commit with concurrent batches. Otherwise the batch is a transaction of its own: every balance
 * row it may touch locked first in one order, runs of at-once items posted with one store call
 * each, the others in a savepoint each.
 */

/** A failure of one batch item that is the item's own (its result), as opposed to the database's (the batch's). */
export type TransferItemError = Exclude<TransferError, SqlError.SqlError>

const isItemError = (error: TransferError): error is TransferItemError => !(error instanceof SqlError.SqlError)

/** An atomic batch stopped at one item: nothing of the batch was written. */
export class TransferBatchAborted extends Data.TaggedError("TransferBatchAborted")<{
  readonly index: number
  readonly error: TransferItemError
}> {}

/** Reads, in one statement per kind, the accounts a batch names that the cache lacks. */
const warmAccounts = (ctx: LedgerDeps, programId: string, orders: ReadonlyArray<TransferOrder>) =>
  Effect.gen(function* () {
    const ids = new Set<string>()
    const currencies = new Set<string>()
    for (const order of orders) {
      const wanted = accountsToRead(order)
      for (const id of wanted.ids) if (ctx.accountCache.lookup(programId, [id], null) === undefined) ids.add(id)
      if (wanted.settlementCurrency !== null && ctx.accountCache.lookup(programId, [], wanted.settlementCurrency) === undefined) {
        currencies.add(wanted.settlementCurrency)
      }
    }
    if (ids.size > 0) ctx.accountCache.remember(yield* ctx.store.findPostingAccounts(programId, [...ids], null))
    for (const currency of currencies) {
      ctx.accountCache.remember(Option.toArray(yield* ctx.store.findSettlementAccount(programId, currency)))
    }
  })

type ItemResult = Either.Either<Posted, TransferItemError>

/** A database failure is the batch's; any other failure is the item's result, or aborts an atomic batch. */
const itemFailure =
  (atomic: boolean, index: number) =>
  (error: TransferError): Effect.Effect<ItemResult, TransferBatchAborted | SqlError.SqlError> =>
    !isItemError(error)
      ? Effect.fail(error)
      : atomic
        ? Effect.fail(new TransferBatchAborted({ index, error }))
        : Effect.succeed(Either.left(error))

/**
 * Posts a run of consecutive items that post at once with ONE store call (`postTransfers`: on
 * SQLite one synchronous call, no savepoint per item), in order; a refused item wrote nothing.
 */
const postRun = (ctx: LedgerDeps, run: ReadonlyArray<{ readonly index: number; readonly p: PreparedTransfer }>, atomic: boolean) =>
  Effect.gen(function* () {
    const now = yield* nowIso
    const built = run.map(({ p }) => transferPosting(p, p.from ?? p.settlement!, p.to ?? p.settlement!, { _tag: "New" }, now))
    const outcomes = yield* ctx.store.postTransfers(built.map((item) => item.posting))
    return yield* Effect.forEach(run, ({ index }, i) =>
      outcomes[i]!.posted
        ? Effect.succeed<ItemResult>(Either.right({ posted: built[i]!.posted, wake: outcomes[i]!.wake }))
        : itemFailure(atomic, index)(refused(outcomes[i]!))
    )
  })

/**
 * The accounts a batch will post to: the named ones of this program (warmed into the cache; an id
 * of another program is never locked) and the settlement accounts the cache knows.
 */
const batchAccounts = (ctx: LedgerDeps, programId: string, orders: ReadonlyArray<TransferOrder>) => {
  const ids = new Set<string>()
  for (const order of orders) {
    const wanted = accountsToRead(order)
    for (const id of wanted.ids) if (ctx.accountCache.lookup(programId, [id], null) !== undefined) ids.add(id)
    if (wanted.settlementCurrency !== null) {
      for (const account of ctx.accountCache.lookup(programId, [], wanted.settlementCurrency) ?? []) ids.add(account.id)
    }
  }
  return [...ids].sort()
}

type Prepared = Either.Either<PreparedTransfer, TransferError>

/** The items in order, inside the batch's transaction: runs of at-once items in one call each, the others in a savepoint each. */
const postItems = (
  ctx: LedgerDeps,
  programId: string,
  items: ReadonlyArray<Prepared>,
  orders: ReadonlyArray<TransferOrder>,
  atomic: boolean
) =>
  Effect.gen(function* () {
    // Every balance row the batch may touch, locked first and in one order: no deadlock with another batch.
    yield* ctx.store.lockAccounts(batchAccounts(ctx, programId, orders))
    const results: Array<ItemResult> = []
    let run: Array<{ readonly index: number; readonly p: PreparedTransfer }> = []
    const flush = Effect.suspend(() => {
      const pending = run
      run = []
      return pending.length === 0 ? Effect.void : Effect.map(postRun(ctx, pending, atomic), (posted) => void results.push(...posted))
    })
    for (const [index, prepared] of items.entries()) {
      if (Either.isRight(prepared) && postsAtOnce(prepared.right)) {
        run.push({ index, p: prepared.right })
        continue
      }
      yield* flush
      const posting: Effect.Effect<Posted, TransferError> = Either.isLeft(prepared)
        ? Effect.fail(prepared.left)
        : ctx.transactor.withTransaction(noCard(postPrepared(ctx, prepared.right)))
      results.push(
        yield* Effect.catchAll(
          Effect.map(posting, (posted): ItemResult => Either.right(posted)),
          itemFailure(atomic, index)
        )
      )
    }
    yield* flush
    return results
  })

/**
 * A batch whose every item posts at once (or, unless atomic, failed before posting): ONE store
 * call writes it, decided together over the balances as they stand at the write (see
 * `postNewTransfers`); refused items write nothing, and when atomic nothing is written unless
 * every item posts.
 */
const postAtOnce = (ctx: LedgerDeps, items: ReadonlyArray<Prepared>, atomic: boolean) =>
  Effect.gen(function* () {
    const now = yield* nowIso
    const built = items.map((item) =>
      Either.map(item, (p) => transferPosting(p, p.from ?? p.settlement!, p.to ?? p.settlement!, { _tag: "New" }, now))
    )
    const postings = built.flatMap((item) => (Either.isRight(item) ? [item.right.posting] : []))
    const call = ctx.store.postNewTransfers(postings, { allOrNothing: atomic })
    // SQLite hands it to its writer thread (in a caller's transaction it joins that one either way).
    const outcomes = postings.length === 0 ? [] : yield* ctx.store.commitsNewTransfersItself ? call : write(ctx, call, { atomic: true })
    let next = 0
    return yield* Effect.forEach(built, (item, index): Effect.Effect<ItemResult, TransferBatchAborted | SqlError.SqlError> => {
      if (Either.isLeft(item)) return itemFailure(atomic, index)(item.left)
      const outcome = outcomes[next++]!
      return outcome.posted
        ? Effect.succeed(Either.right({ posted: item.right.posted, wake: outcome.wake }))
        : itemFailure(atomic, index)(refused(outcome))
    })
  })

/**
 * Posts many transfers in ONE database transaction (docs/ledger.md#batches), each exactly as
 * `post` would. Not atomic: each item has its own result — its transfer, or its failure with
 * nothing of it written — and the others commit. Atomic: the first failing item aborts the batch
 * and nothing is written (TransferBatchAborted naming it). A database failure fails the batch.
 */
export const postBatch = (ctx: LedgerDeps, programId: string, orders: ReadonlyArray<TransferOrder>, atomic: boolean) =>
  Effect.gen(function* () {
    yield* warmAccounts(ctx, programId, orders)
    const items: ReadonlyArray<Prepared> = yield* Effect.forEach(orders, (order) => Effect.either(prepare(ctx, programId, order)))
    // A database failure while preparing is the batch's; an atomic batch stops at its first failing item.
    for (const [index, item] of items.entries()) {
      if (Either.isLeft(item) && (!isItemError(item.left) || atomic)) yield* itemFailure(atomic, index)(item.left)
    }
    const results = items.every((item) => Either.isLeft(item) || postsAtOnce(item.right))
      ? yield* postAtOnce(ctx, items, atomic)
      : // A transaction of its own (or the caller's), never a unit of the write lane: its items are
        // several store calls, which a lane unit would have to wrap in a savepoint of their own.
        yield* ctx.transactor.withTransaction(postItems(ctx, programId, items, orders, atomic))
    if (results.some((result) => Either.isRight(result) && result.right.wake)) yield* ctx.webhooks.wake
    return results.map(Either.map((item) => item.posted))
  })
