import * as SqlClient from "@effect/sql/SqlClient"
import { ChangeFeed, publishChange, readVersion } from "@issuing/core"
import { Effect, Layer, Option } from "effect"
import { SqliteDatabase } from "./SqliteClient.js"

const NONE = Option.none<string>()

/**
 * The SQLite change feed: the version row (migration 0060), bumped in every publishing
 * transaction and read per request — every process on the file sees another's commit on its
 * next read, so there is nothing to lose. The read is one prepared statement run synchronously
 * while the connection is idle; while this process has a transaction open it goes through the
 * client, which waits for that transaction (an uncommitted bump must not be seen).
 */
export const SqliteChangeFeedLive = Layer.effect(
  ChangeFeed,
  Effect.gen(function* () {
    const client = yield* SqlClient.SqlClient
    const db = yield* SqliteDatabase
    // better-sqlite3 tells whether a transaction is open; the handle's interface does not name it.
    const connection = db as unknown as { readonly inTransaction: boolean }
    const statement = db.prepare("SELECT version FROM issuing_changes WHERE id = 1")
    const committed = Effect.suspend(() =>
      connection.inTransaction
        ? Effect.provideService(readVersion, SqlClient.SqlClient, client)
        : Effect.try({
            try: () => Option.map(Option.fromNullable(statement.get() as { version: number } | undefined), (row) => String(row.version)),
            catch: (cause) => cause
          }).pipe(Effect.orElse(() => Effect.provideService(readVersion, SqlClient.SqlClient, client)))
    )
    return {
      version: Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (inTransaction) =>
        // Inside a transaction reads may see its own uncommitted changes: never cache them.
        Option.isSome(inTransaction) ? Effect.succeed(NONE) : Effect.orElseSucceed(committed, () => NONE)
      ),
      committed,
      publish: (topic, id) => Effect.asVoid(Effect.provideService(publishChange(topic, id), SqlClient.SqlClient, client))
    }
  })
)
