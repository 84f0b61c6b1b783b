import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"

/** What a change is about; a payload names it for logs, caches drop everything on any change. */
export type ChangeTopic = "card" | "api_key" | "webhook_subscription" | "oauth" | "authorization_endpoint"

/** The PostgreSQL channel a change is notified on, at commit. */
export const CHANGE_NOTIFY_CHANNEL = "issuing_changes"

/**
 * The store's change feed (docs/operations.md#running-several-nodes): every change that a cache
 * on any node must not outlive (a card freeze, a key revocation …) bumps one version in the
 * database in its own transaction. Caches remember the version they were filled at and serve an
 * entry only while it is still the newest.
 */
export interface ChangeFeedService {
  /**
   * The newest change this node has seen, cheap enough for every request (PostgreSQL: advanced by
   * notifications; SQLite: the version row read from the file). None while the feed is down (no
   * LISTEN connection, or this node's own change not yet notified back): caches are bypassed.
   */
  readonly version: Effect.Effect<Option.Option<string>>
  /**
   * A version that includes every change committed before the call (PostgreSQL: one read of the
   * version row; SQLite: the same as `version`). For decisions that must not trust a notification
   * still in flight.
   */
  readonly committed: Effect.Effect<Option.Option<string>, SqlError.SqlError>
  /** Records a change inside the caller's transaction; other nodes learn of it at commit. */
  readonly publish: (topic: ChangeTopic, id: string) => Effect.Effect<void, SqlError.SqlError>
}

/** The change feed port. */
export class ChangeFeed extends Context.Tag("@issuing/core/ChangeFeed")<ChangeFeed, ChangeFeedService>() {}
