/** @issuing/store-pg: the PostgreSQL store (@effect/sql-pg over a connection pool). */
import * as Migrator from "@effect/sql/Migrator"
import { PgClient } from "@effect/sql-pg"
import { SqlStoresLive } from "@issuing/core"
import { Effect, Layer, Redacted } from "effect"
import { migrations } from "./migrations/index.js"
import { PgWebhookWakeupsLive } from "./WebhookWakeups.js"

export interface PgOptions {
  /** A `postgres://` connection URL. */
  readonly url: string
  /** Pool size (default 10). */
  readonly maxConnections?: number | undefined
}

/** Applies every pending migration (recorded in `issuing_migrations`, under a table lock). */
export const migrate = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "issuing_migrations" })

/** The pooled PostgreSQL client. */
export const clientLayer = (options: PgOptions) =>
  PgClient.layer({
    url: Redacted.make(options.url),
    maxConnections: options.maxConnections ?? 10,
    applicationName: "issuing"
  })

/** A PostgreSQL database migrated and serving every storage port, plus its SqlClient. */
export const layer = (options: PgOptions) =>
  SqlStoresLive.pipe(
    Layer.provideMerge(PgWebhookWakeupsLive),
    Layer.provideMerge(Layer.effectDiscard(Effect.orDie(migrate))),
    Layer.provideMerge(clientLayer(options))
  )
