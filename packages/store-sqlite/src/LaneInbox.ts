import { Chunk, Effect, Queue } from "effect"

/**
 * The writer-thread lane's inbox: the batches callers queue, and a doorbell each of them rings once
 * queued, so the lane can wait for "a batch, or a job's answer, whichever first" without taking
 * from the queue while it waits.
 *
 * Not `Effect.race(Queue.take(queue), answer)`: when a batch and the answer come on the same tick,
 * the take can hand over its batch and still lose the race, and the batch it took is dropped (its
 * caller waits forever). Losing a take of the doorbell drops only a ring, and the lane looks at
 * the queue itself after every wait.
 */
export const makeLaneInbox = <A>(maxTaken: number) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<A>()
    // One pending ring is enough: a ring says only "look at the queue".
    const doorbell = yield* Queue.sliding<void>(1)
    const takeUpTo = (max: number) => Effect.map(Queue.takeUpTo(queue, max), Chunk.toReadonlyArray)
    return {
      /** Queues an item and rings the doorbell. */
      offer: (item: A) => Effect.zipRight(Queue.offer(queue, item), Queue.offer(doorbell, undefined)),
      /** Waits for an item, then takes it and whatever else is queued, `maxTaken` at most. */
      takeFirst: Effect.flatMap(Queue.take(queue), (first) => Effect.map(takeUpTo(maxTaken - 1), (rest) => [first, ...rest])),
      /** Takes what is queued, `maxTaken` at most (none when the queue is empty). */
      takeQueued: takeUpTo(maxTaken),
      /**
       * Returns once an item is queued or `other` completes, whichever first, taking no item:
       * at once when one is queued already.
       */
      awaitItemOr: <X>(other: Effect.Effect<X>): Effect.Effect<void> =>
        Effect.gen(function* () {
          // Rings of items already taken say nothing any more: the queue itself is read next.
          yield* Queue.takeAll(doorbell)
          if (yield* Queue.isEmpty(queue)) yield* Effect.race(Queue.take(doorbell), Effect.asVoid(other))
        })
    }
  })

/** The lane's inbox (see makeLaneInbox). */
export type LaneInbox<A> = Effect.Effect.Success<ReturnType<typeof makeLaneInbox<A>>>
