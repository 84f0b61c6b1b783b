import type { SqlError } from "@effect/sql"
import type { PostingOutcome, TransferPosting } from "@issuing/core"
import { Deferred, Effect, Exit, FiberSet } from "effect"

/** Most postings written by one coalesced batch. */
export const MAX_COALESCED_POSTINGS = 256
/** Batches in flight at once, each on its own pooled connection. */
export const COALESCING_LANES = 2

interface Waiter {
  readonly posting: TransferPosting
  readonly done: Deferred.Deferred<PostingOutcome, SqlError.SqlError>
}

export interface PostingCoalescer {
  /** Posts one new transfer, in a batch with whatever other postings are waiting; resolves after its commit. */
  readonly post: (posting: TransferPosting) => Effect.Effect<PostingOutcome, SqlError.SqlError>
}

/**
 * Concurrent postings of new transfers coalesced into set-based batches (docs/ledger.md#coalesced-postings-on-postgresql).
 *
 * A posting that finds a lane free runs at once, alone, through `one` (one statement). While
 * `lanes` batches are in flight, the postings that arrive wait; the first lane to finish takes
 * every waiting posting (up to `maxBatch`) and writes them through `many`, which decides them in
 * arrival order as one after another would have been (each refused one writes nothing, the others
 * commit together). So one request alone pays what it always paid, and under load the per-statement
 * costs of a posting (its round trip, its statement triggers and their list-count upserts, its
 * commit's WAL flush) are shared by every posting of its batch.
 *
 * Each caller gets its own outcome, after the commit. A batch that fails as a whole (a database
 * error) does not fail its postings: each runs again alone through `one`, so one posting's error
 * stays its own, and a transient failure (a deadlock) reaches its caller's retry. A batch, once
 * started, runs to its end (uninterruptible): the writes of the others in it do not depend on one
 * caller waiting; a caller interrupted while still waiting leaves the queue.
 */
export const makePostingCoalescer = (
  one: (posting: TransferPosting) => Effect.Effect<PostingOutcome, SqlError.SqlError>,
  many: (postings: ReadonlyArray<TransferPosting>) => Effect.Effect<ReadonlyArray<PostingOutcome>, SqlError.SqlError>,
  { lanes = COALESCING_LANES, maxBatch = MAX_COALESCED_POSTINGS }: { readonly lanes?: number; readonly maxBatch?: number } = {}
) =>
  Effect.gen(function* () {
    // The lanes' fibers belong to the layer's scope, not to the request that started them.
    const fibers = yield* FiberSet.make<void, never>()
    let closed = false
    yield* Effect.addFinalizer(() => Effect.sync(() => (closed = true)))
    const waiting: Array<Waiter> = []
    let running = 0

    const alone = (waiter: Waiter) => Effect.flatMap(Effect.exit(one(waiter.posting)), (exit) => Deferred.done(waiter.done, exit))

    const runBatch = (batch: ReadonlyArray<Waiter>) =>
      batch.length === 1
        ? alone(batch[0]!)
        : Effect.flatMap(Effect.exit(many(batch.map((waiter) => waiter.posting))), (exit) =>
            Exit.isSuccess(exit)
              ? Effect.forEach(batch, (waiter, i) => Deferred.succeed(waiter.done, exit.value[i]!), { discard: true })
              : Effect.forEach(batch, alone, { discard: true })
          )

    // A lane: batch after batch until nobody waits.
    const lane: Effect.Effect<void> = Effect.suspend(() => {
      if (waiting.length === 0) {
        running -= 1
        return Effect.void
      }
      return Effect.zipRight(Effect.uninterruptible(Effect.asVoid(runBatch(waiting.splice(0, maxBatch)))), lane)
    })

    // Closing the layer interrupts a lane between batches: whoever still waits is interrupted too.
    const closing = Effect.suspend(() => {
      running -= 1
      return Effect.forEach(waiting.splice(0), (waiter) => Deferred.interrupt(waiter.done), { discard: true })
    })

    // Joining the queue and starting a lane are one uninterruptible step: a caller interrupted
    // between them would leave a lane counted that never runs, and the queue stalled behind it.
    // Only the wait is interruptible; a caller that stops waiting leaves the queue. Written as
    // one step over the fiber rather than a generator: every new transfer runs it
    // (docs/operations.md#volume, "The Node side, profiled").
    const post = (posting: TransferPosting) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.withFiberRuntime<PostingOutcome, SqlError.SqlError>((fiber) => {
          // The layer is closing: no lane will start, so this one goes alone.
          if (closed) return restore(one(posting))
          const waiter: Waiter = { posting, done: Deferred.unsafeMake<PostingOutcome, SqlError.SqlError>(fiber.id()) }
          waiting.push(waiter)
          const wait = restore(Deferred.await(waiter.done)).pipe(
            Effect.onInterrupt(() =>
              Effect.sync(() => {
                const at = waiting.indexOf(waiter)
                if (at >= 0) waiting.splice(at, 1)
              })
            )
          )
          if (running >= lanes) return wait
          running += 1
          // Forked here it would inherit this step's uninterruptibility: closing the layer
          // interrupts it between batches.
          return Effect.zipRight(
            FiberSet.run(
              fibers,
              Effect.onInterrupt(Effect.interruptible(lane), () => closing)
            ),
            wait
          )
        })
      )

    return { post } satisfies PostingCoalescer
  })
