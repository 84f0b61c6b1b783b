import { Duration, Effect, Option, Schedule, Stream } from "effect"

/** The doorbell of the delivery queue: rung when deliveries may have become due. */
export interface WorkSignal {
  /** Wakes every waiting worker now, or, when none waits, the next one to wait. */
  readonly ring: Effect.Effect<void>
  /** `ring`, telling whether a worker was waiting (it claims at once; one busy claims when its round ends). */
  readonly ringWaiting: Effect.Effect<boolean>
  /** Resolves at the next ring (at once when one came since the last wait ended) or after `maxWaitMs`. */
  readonly wait: (maxWaitMs: number) => Effect.Effect<void>
}

/**
 * A work signal over an Effect latch: ringing opens it, which releases every waiter and keeps a
 * ring nobody waited for (the next wait returns at once); each wait closes it when it ends, so one
 * ring ends the waits it found. With `notifications` (commits of other connections, e.g.
 * PostgreSQL LISTEN) each one rings: they are listened to from the first wait on, in the layer's
 * scope, and the listener starts again a second after it stops.
 */
export const makeWorkSignal = (notifications: Option.Option<Stream.Stream<unknown, unknown>>) =>
  Effect.gen(function* () {
    const latch = yield* Effect.makeLatch(false)
    const scope = yield* Effect.scope
    const listen = Option.isNone(notifications)
      ? Effect.void
      : yield* Effect.once(
          notifications.value.pipe(
            Stream.runForEach(() => latch.open),
            Effect.catchAllCause((cause) => Effect.logDebug("Webhook notification listener stopped; retrying", cause)),
            Effect.repeat(Schedule.spaced("1 second")),
            Effect.forkIn(scope)
          )
        )
    let waiting = 0
    const signal: WorkSignal = {
      ring: latch.open,
      ringWaiting: Effect.zipRight(
        latch.open,
        Effect.sync(() => waiting > 0)
      ),
      wait: (maxWaitMs) =>
        listen.pipe(
          Effect.zipRight(
            Effect.acquireUseRelease(
              Effect.sync(() => waiting++),
              () => latch.await.pipe(Effect.timeoutOption(Duration.millis(Math.max(0, maxWaitMs)))),
              () => Effect.sync(() => waiting--)
            )
          ),
          Effect.zipRight(latch.close)
        )
    }
    return signal
  })
