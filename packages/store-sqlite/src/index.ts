/** @issuing/store-sqlite: the SQLite store (better-sqlite3). */
import * as Migrator from "@effect/sql/Migrator"
import { GroupCommitLane, sqlStores } from "@issuing/core"
import { Effect, Layer } from "effect"
import { migrations } from "./migrations/index.js"
import { SqliteChangeFeedLive } from "./SqliteChangeFeed.js"
import * as SqliteClient from "./SqliteClient.js"
import { SqliteLedgerPostingLive } from "./SqlitePosting.js"
import { SqliteStoreWriterThreadLive } from "./StoreWriterThread.js"

export {
  SqliteDatabase,
  type SqliteOptions,
  SqliteWriter,
  type SqliteWriterService,
  type WriterJobPlan
} from "./SqliteClient.js"
export type { WriterResult } from "./WriterThread.js"
export { type SyncConnection, SyncSql, type SyncSqlService, type SyncStatement } from "./SyncSql.js"
export { SqliteClient }

/** Applies every pending migration (recorded in `issuing_migrations`). */
export const migrate = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "issuing_migrations" })

/**
 * A SQLite file (or `:memory:`) migrated and serving every storage port, plus its SqlClient.
 * One writer, one fsync per commit: concurrent lone writes share a commit (group commit).
 */
export const layer = (options: SqliteClient.SqliteOptions) =>
  sqlStores(Layer.merge(SqliteLedgerPostingLive, GroupCommitLane)).pipe(
    // The delivery worker's writes and the rate limiter's leases on the writer thread, where there is one.
    Layer.provideMerge(SqliteStoreWriterThreadLive),
    // The change feed reads the version row the migrations create.
    Layer.provideMerge(SqliteChangeFeedLive),
    Layer.provideMerge(Layer.effectDiscard(Effect.orDie(migrate))),
    Layer.provideMerge(SqliteClient.layer(options))
  )
