/** @issuing/store-sqlite: the SQLite store (better-sqlite3). */
import * as Migrator from "@effect/sql/Migrator"
import { SqlStoresLive } from "@issuing/core"
import { Effect, Layer } from "effect"
import { migrations } from "./migrations/index.js"
import * as SqliteClient from "./SqliteClient.js"

export { SqliteDatabase, type SqliteOptions } from "./SqliteClient.js"
export { SqliteClient }

/** Applies every pending migration (recorded in `issuing_migrations`). */
export const migrate = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "issuing_migrations" })

/** A SQLite file (or `:memory:`) migrated and serving every storage port, plus its SqlClient. */
export const layer = (options: SqliteClient.SqliteOptions) =>
  SqlStoresLive.pipe(
    Layer.provideMerge(Layer.effectDiscard(Effect.orDie(migrate))),
    Layer.provideMerge(SqliteClient.layer(options))
  )
