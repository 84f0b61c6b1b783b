import type { SqlError } from "@effect/sql"
import { Context, Effect } from "effect"
import type { Conflict } from "../platform/Errors.js"

/**
 * The request's commit point, for an operation that calls out to another system while it runs (a
 * real-time authorization decision, a webhook delivered now; docs/api.md#idempotency). Such an
 * operation finds what it needs, decides, calls out with nothing written and no transaction open,
 * then writes once, here.
 */
export interface IdempotentCommitService {
  /**
   * Runs `write`, the operation's one write after its call-out. Under an Idempotency-Key's claim,
   * `write` runs in one database transaction that also stores the request's answer — `write`'s
   * value, which must be the operation's result, as the endpoint sends it — so a retry after a
   * crash finds either that answer or nothing written. Elsewhere (no key, outside HTTP) it just
   * runs `write`. At most once per request. Fails with Conflict when the key's claim was lost
   * while the operation called out (its lease ran out): then nothing is written.
   */
  readonly commit: <A, E, R>(write: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Conflict | SqlError.SqlError, R>
}

/** The commit point in force: the request's claim-bound one (Idempotency.run provides it), else one that just runs the write. */
export class IdempotentCommit extends Context.Reference<IdempotentCommit>()("@issuing/core/IdempotentCommit", {
  defaultValue: (): IdempotentCommitService => ({ commit: (write) => write })
}) {}

/** Runs `write` at the commit point in force (IdempotentCommit). */
export const commitAtPoint = <A, E, R>(write: Effect.Effect<A, E, R>): Effect.Effect<A, E | Conflict | SqlError.SqlError, R> =>
  Effect.flatMap(IdempotentCommit, (point) => point.commit(write))
