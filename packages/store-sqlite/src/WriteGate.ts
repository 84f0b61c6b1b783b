import { Effect } from "effect"

/**
 * The process's write gate (docs/architecture.md#the-sqlite-writer-thread): one holder at a time,
 * waiters served in order, each until its own deadline.
 *
 * Not a Semaphore under Effect.timeoutFail: a hand-over landing on the same tick as the waiter's
 * timeout was taken by the timed-out (discarded) fiber and the gate was never released again —
 * every later write of the process hung. Here the timer and the hand-over both run on the event
 * loop and whichever comes first takes the waiter off the queue, so a grant is never lost.
 */
export const makeWriteGate = <E>(timedOut: () => E) => {
  let held = false
  /** Waiters in order; `writer`: a write transaction of the main connection (not the batch lane). */
  const queue: Array<{ readonly grant: () => void; readonly writer: boolean }> = []
  const handOn = () => {
    const next = queue.shift()
    if (next === undefined) held = false
    else next.grant()
  }
  const leave = (waiter: (typeof queue)[number]) => {
    const at = queue.indexOf(waiter)
    if (at < 0) return false
    queue.splice(at, 1)
    return true
  }
  return {
    /** Takes the gate, waiting at most until `deadline` (ms since the epoch); fails with `timedOut()` after it. */
    take: (deadline: number, writer: boolean) =>
      Effect.async<void, E>((resume) => {
        if (!held) {
          held = true
          return resume(Effect.void)
        }
        let granted = false
        const waiter = {
          writer,
          grant: () => {
            granted = true
            clearTimeout(timer)
            resume(Effect.void)
          }
        }
        queue.push(waiter)
        const timer = setTimeout(
          () => {
            if (leave(waiter)) resume(Effect.fail(timedOut()))
          },
          Math.max(0, deadline - Date.now())
        )
        // Interrupted while waiting: leave the queue, or hand on a grant that came too late.
        return Effect.sync(() => {
          clearTimeout(timer)
          if (granted) handOn()
          else leave(waiter)
        })
      }),
    release: Effect.sync(handOn),
    /** True while a write transaction of the main connection waits: the batch lane should let the gate go soon. */
    writersWaiting: () => queue.some((waiter) => waiter.writer)
  }
}
