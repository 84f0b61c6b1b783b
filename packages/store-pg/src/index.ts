/** @issuing/store-pg: the PostgreSQL store (@effect/sql-pg over a connection pool). */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { sqlStores, TransactionPerWriteLane } from "@issuing/core"
import { Effect, Layer, Redacted } from "effect"
import { migrations } from "./migrations/index.js"
import { pgChangeFeedLayer } from "./PgChangeFeed.js"
import { PgListener } from "./PgListener.js"
import { PgLedgerPostingLive } from "./PgPosting.js"
import { webhookWakeupsLayer } from "./WebhookWakeups.js"

export interface PgOptions {
  /** A `postgres://` connection URL. */
  readonly url: string
  /** Pool size (default 10). */
  readonly maxConnections?: number | undefined
}

/** An arbitrary constant naming the advisory lock that serializes migrations across processes. */
const MIGRATION_LOCK_KEY = 7_412_553_119

const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "issuing_migrations" })

/**
 * Applies every pending migration (recorded in `issuing_migrations`). The whole run holds a
 * transaction-scoped advisory lock: the Migrator alone creates its table outside any lock and
 * skips (returns at once) when another process holds its table lock, so two processes starting
 * on an empty database (`serve` and `worker`) could race or one could start before the schema is
 * complete. Under the lock the second waits, then finds everything applied.
 */
export const migrate = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.pipe(
      // The Migrator probes for its table with a query that fails when the table is missing, which
      // inside a transaction would abort it; the table (the Migrator's own shape) is made here.
      Effect.zipRight(sql`CREATE TABLE IF NOT EXISTS issuing_migrations (
        migration_id integer PRIMARY KEY,
        created_at timestamp with time zone NOT NULL DEFAULT now(),
        name text NOT NULL
      )`),
      Effect.zipRight(runMigrations)
    )
  )
)

/** The pooled PostgreSQL client. */
export const clientLayer = (options: PgOptions) =>
  PgClient.layer({
    url: Redacted.make(options.url),
    maxConnections: options.maxConnections ?? 10,
    applicationName: "issuing"
  })

/** A PostgreSQL database migrated and serving every storage port, plus its SqlClient. */
export const layer = (options: PgOptions) => {
  // One listening connection per store: the change feed and webhook wake-ups share it.
  const listener = new PgListener(options.url)
  // PostgreSQL shares WAL flushes between concurrent commits: each write is its own transaction.
  return sqlStores(Layer.merge(PgLedgerPostingLive, TransactionPerWriteLane)).pipe(
    Layer.provideMerge(webhookWakeupsLayer(listener)),
    Layer.provideMerge(pgChangeFeedLayer(listener)),
    Layer.provideMerge(Layer.effectDiscard(Effect.orDie(migrate))),
    Layer.provideMerge(clientLayer(options))
  )
}
