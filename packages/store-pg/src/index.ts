/** @issuing/store-pg: the PostgreSQL store (@effect/sql-pg over a connection pool). */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { sqlStores, TransactionPerWriteLane, WebhookClaimClient } from "@issuing/core"
import { Effect, Layer, Redacted } from "effect"
import pg from "pg"
import { FUNCTION_FILES } from "./functions/index.js"
import { migrations } from "./migrations/index.js"
import { pgChangeFeedLayer } from "./PgChangeFeed.js"
import { PgListener } from "./PgListener.js"
import { PgLedgerPostingLive } from "./PgPosting.js"
import { applyFunctionFiles } from "./StoredFunctions.js"
import { webhookWakeupsLayer } from "./WebhookWakeups.js"

/** The list counts a posting record adds (the bench's records are built as the store's are). */
export { countsOf } from "./PostingRecord.js"

export interface PgOptions {
  /** A `postgres://` connection URL. */
  readonly url: string
  /** Pool size (default 10). */
  readonly maxConnections?: number | undefined
  /**
   * The URL of the listening connection (default `url`): a session of its own, so a direct URL
   * when `url` goes through a transaction pooler (docs/operations.md#pgbouncer).
   */
  readonly listenUrl?: string | undefined
  /**
   * LISTEN/NOTIFY (default true). False for engines without them: no listening connection, no
   * NOTIFY; caches are revalidated against the version row and the webhook worker polls the queue.
   */
  readonly notify?: boolean | undefined
}

/** An arbitrary constant naming the advisory lock that serializes migrations across processes. */
const MIGRATION_LOCK_KEY = 7_412_553_119

const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "issuing_migrations" })

/** The id of the newest migration this release has. */
const LATEST_MIGRATION_ID = Math.max(...Object.keys(migrations).map((id) => Number(id.slice(0, 4))))

/**
 * Applies every pending migration (recorded in `issuing_migrations`), then every stored function
 * whose file changed (src/functions/, recorded in `issuing_function_checksums`;
 * docs/architecture.md#stored-functions), in one transaction: a failure of either leaves the
 * database as it was. The whole run holds a transaction-scoped advisory lock: the Migrator alone
 * creates its table outside any lock and skips (returns at once) when another process holds its
 * table lock, so two processes starting on an empty database (`serve` and `worker`) could race or
 * one could start before the schema is complete. Under the lock the second waits, then finds
 * everything applied. Returns the migrations applied.
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
      Effect.zipRight(runMigrations),
      Effect.tap(() => applyFunctionFiles(FUNCTION_FILES, LATEST_MIGRATION_ID))
    )
  )
)

/**
 * The pooled PostgreSQL client. Connections, once open, stay open (`minConnections` is the pool's
 * size): a closed idle connection reopened under load pays PostgreSQL's start-up and its first
 * statements' catalog reads again (docs/operations.md#a-warm-pool).
 */
export const clientLayer = (options: PgOptions) =>
  PgClient.layer({
    url: Redacted.make(options.url),
    maxConnections: options.maxConnections ?? 10,
    minConnections: options.maxConnections ?? 10,
    applicationName: "issuing"
  })

/** The `application_name` of the webhook worker's claim connection (operators see it in pg_stat_activity). */
export const CLAIM_APPLICATION_NAME = "issuing-claim"

/**
 * The webhook worker's claim connection (docs/webhooks.md#the-claims-own-connection): a pool of one
 * of its own, so a claim never waits for a pooled connection behind the API's writes. Opened at
 * start and closed after 10 s without a claim (pg's idle timeout), so a node that runs no worker
 * holds it only for its first seconds. When it cannot be opened (a server at its connection
 * limit) the claims run on the store's pool, as before it.
 */
const claimClientLayer = (options: PgOptions) =>
  Layer.effect(WebhookClaimClient, SqlClient.SqlClient).pipe(
    Layer.provide(
      PgClient.layer({ url: Redacted.make(options.url), maxConnections: 1, minConnections: 0, applicationName: CLAIM_APPLICATION_NAME })
    ),
    Layer.catchAll((error) =>
      Layer.effectDiscard(Effect.logWarning("The webhook claim connection could not be opened; claims use the pool", error))
    )
  )

/** The tables the API's writes and the webhook worker touch on every request. */
const HOT_TABLES = [
  "issuing_events",
  "issuing_webhook_deliveries",
  "issuing_webhook_attempts",
  "issuing_webhook_subscriptions",
  "issuing_transactions",
  "issuing_transfers",
  "issuing_book_transfers",
  "issuing_book_entries",
  "issuing_balances",
  "issuing_financial_accounts",
  "issuing_list_counts",
  "issuing_changes"
]

/**
 * A lone emit of no events (`issuing_append_events` of empty arrays): it writes nothing, but
 * compiles the emit's plpgsql (the append, the fan-out, the events' count trigger) and plans their
 * statements on the connection. A pooled connection's first lone emit did that itself: 17–70 ms
 * against 4–25 ms for its next ones, measured at load 19 (docs/operations.md#a-warm-pool).
 */
const EMIT_WARM_UP = "SELECT issuing_append_events('{}'::text[], '{}'::text[], '{}'::text[], '{}'::timestamptz[], '{}'::text[])"

/**
 * Opens every connection of the pool at start and plans a statement over the hot tables on each,
 * so that their catalog entries are loaded before the first request instead of by it: measured, a
 * burst that made the pool open 6 connections at once had each one's first write take 57–65 ms
 * (docs/operations.md#a-warm-pool); then runs the emit's warm-up (EMIT_WARM_UP) on each. A failure
 * here (a server at its connection limit) leaves the pool to open connections on demand, as
 * without it.
 */
const warmPool = (size: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.scoped(
      Effect.forEach(
        Array.from({ length: size }, () => undefined),
        () =>
          Effect.flatMap(sql.reserve, (connection) =>
            Effect.zipRight(
              connection.execute(`SELECT 1 FROM ${HOT_TABLES.join(", ")} WHERE false`, [], undefined),
              connection.execute(EMIT_WARM_UP, [], undefined)
            )
          ),
        { concurrency: "unbounded", discard: true }
      )
    )
  ).pipe(Effect.catchAll((error) => Effect.logDebug("The PostgreSQL pool's warm-up failed; connections open on demand", error)))

/**
 * Whether `url` reaches PostgreSQL through a proxy or pooler (PgBouncer, pgcat, a cloud proxy): the
 * backend process id the connection was given at start-up is not the one that runs its
 * statements (a pooler answers the start-up itself with a key of its own, for cancel requests).
 */
export const throughPooler = async (url: string): Promise<boolean> => {
  const client = new pg.Client({ connectionString: url, application_name: "issuing-probe" })
  await client.connect()
  try {
    const { rows } = await client.query("SELECT pg_backend_pid() AS pid")
    return Number(rows[0]?.pid) !== (client as unknown as { processID: number | null }).processID
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** A PostgreSQL database migrated and serving every storage port, plus its SqlClient. */
export const layer = (options: PgOptions) => {
  // One listening connection per store: the change feed and webhook wake-ups share it.
  const listener = options.notify === false ? undefined : new PgListener(options.listenUrl ?? options.url)
  // PostgreSQL shares WAL flushes between concurrent commits: each write is its own transaction.
  return sqlStores(Layer.merge(PgLedgerPostingLive, TransactionPerWriteLane)).pipe(
    // Without a listener there are no wake-ups: the webhook worker polls the queue.
    Layer.provideMerge(listener === undefined ? Layer.empty : webhookWakeupsLayer(listener)),
    Layer.provideMerge(claimClientLayer(options)),
    Layer.provideMerge(pgChangeFeedLayer(listener)),
    Layer.provideMerge(Layer.effectDiscard(warmPool(options.maxConnections ?? 10))),
    Layer.provideMerge(Layer.effectDiscard(Effect.orDie(migrate))),
    Layer.provideMerge(clientLayer(options))
  )
}
