import type { SqlError } from "@effect/sql"
import { Deferred, Effect, Exit, Queue } from "effect"
import { isRetryableSqlError, type TransactorService } from "./Transactor.js"

/** Most units of work committed by one database transaction. */
export const MAX_GROUP_COMMIT_BATCH = 64
/** How long a batch waits for companions after its first unit arrives, in milliseconds. */
export const GATHER_MS = 1

interface Item {
  readonly effect: Effect.Effect<unknown, unknown>
  readonly done: Deferred.Deferred<unknown, unknown>
  /** The unit is all-or-nothing by itself (see `submit`): it needs no savepoint of its own. */
  readonly atomic: boolean
}

/** Marks a unit that hit a transient concurrency failure inside a batch: it runs again on its own. */
const RUN_ALONE = Symbol("RunAlone")

/**
 * Group commit: units of work submitted concurrently are run one after another inside ONE database
 * transaction, each in its own savepoint, so one durable commit (one fsync) serves the whole batch.
 * Each unit keeps its all-or-nothing semantics: a unit that fails rolls back to its savepoint and
 * fails alone; the others commit. (A unit submitted as `atomic` — one store call that is
 * all-or-nothing by itself, e.g. the SQLite one-call posting — runs without that savepoint.) A unit's result is handed back only after the commit, so nobody
 * sees a success that was not durable. A unit that hits a deadlock or serialization failure inside
 * a batch is run again alone under the Transactor's retry policy.
 */
export const makeGroupCommit = (transactor: TransactorService, maxBatch = MAX_GROUP_COMMIT_BATCH, gatherMs = GATHER_MS) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Item>()

    /**
     * One batch. The companions are taken from the queue only once the transaction is open (the
     * connection is ours): everyone who queued while we waited for the connection joins this
     * commit. Taking them before BEGIN made every batch a batch of one under HTTP load.
     */
    const runBatch = (first: Item) =>
      Effect.gen(function* () {
        let items: ReadonlyArray<Item> | undefined
        const body = Effect.suspend(() =>
          // A retry of the whole transaction (SQLITE_BUSY…) re-runs the same batch.
          Effect.flatMap(
            items === undefined
              ? Effect.map(Queue.takeUpTo(queue, maxBatch - 1), (rest) => (items = [first, ...rest]))
              : Effect.succeed(items),
            (batch) =>
              batch.length === 1
                ? // A batch of one needs no savepoint: its own transaction is its rollback boundary.
                  Effect.map(batch[0]!.effect, (value) => [Exit.succeed(value)] as ReadonlyArray<Exit.Exit<unknown, unknown>>)
                : Effect.forEach(batch, (item) => Effect.exit(item.atomic ? item.effect : transactor.withTransaction(item.effect)))
          )
        )
        const outcome = yield* Effect.exit(transactor.withTransaction(body))
        // The transaction never began (another process held the write lock past the busy timeout):
        // everyone who queued while we waited for it gets that answer now, instead of each waiting
        // the whole timeout again as the next batch's first unit (a request could wait minutes).
        const batch = items ?? [first, ...(Exit.isFailure(outcome) ? yield* Queue.takeAll(queue) : [])]
        if (Exit.isFailure(outcome)) {
          // A lone unit's own failure, or a failed BEGIN/COMMIT: every unit of the batch gets it.
          return yield* Effect.forEach(batch, (item) => Deferred.done(item.done, outcome), { discard: true })
        }
        yield* Effect.forEach(
          batch,
          (item, index) => {
            const exit = outcome.value[index]!
            const retry = batch.length > 1 && Exit.isFailure(exit) && exit.cause._tag === "Fail" && isRetryableSqlError(exit.cause.error)
            return Deferred.done(item.done, retry ? Exit.fail(RUN_ALONE) : exit)
          },
          { discard: true }
        )
      })

    yield* Queue.take(queue).pipe(
      // Under concurrency, requests that arrived with the first one are still finishing their
      // (non-transactional) reads; a short pause lets them join this batch instead of each paying
      // for its own commit.
      // (Skipping the pause when the previous batch was a lone unit was tried: under HTTP load the
      // lane then always grabbed the first arrival alone and every transfer paid its own fsync.)
      Effect.zipLeft(Effect.sleep(gatherMs)),
      Effect.flatMap(runBatch),
      Effect.forever,
      Effect.forkScoped
    )

    return {
      /**
       * Runs `effect` in the next group transaction; resolves after that transaction committed.
       * `atomic`: the effect is all-or-nothing on its own — it makes at most one write, a call that
       * rolls itself back when it fails — so it is run without a savepoint (one statement through @effect/sql saved).
       */
      submit: <A, E>(effect: Effect.Effect<A, E>, options?: { readonly atomic?: boolean }): Effect.Effect<A, E | SqlError.SqlError> =>
        Effect.gen(function* () {
          const done = yield* Deferred.make<unknown, unknown>()
          yield* Queue.offer(queue, { effect, done, atomic: options?.atomic === true })
          const exit = yield* Effect.exit(Deferred.await(done))
          if (Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error === RUN_ALONE) {
            return yield* transactor.withTransaction(effect)
          }
          return yield* exit as Exit.Exit<A, E | SqlError.SqlError>
        })
    }
  })
