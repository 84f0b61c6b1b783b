import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { CHANGE_NOTIFY_CHANNEL, type ChangeTopic } from "./ChangeFeed.js"

/** The version row's value as text (PostgreSQL bigint arrives as text, SQLite as a number). */
const versionOf = (rows: ReadonlyArray<any>): Option.Option<string> =>
  Option.map(Option.fromNullable(rows[0]), (row) => String(row.version))

/** The committed version row (migration 0060). */
export const readVersion = Effect.map(SqlClient.SqlClient, (client) => client.withoutTransforms()).pipe(
  Effect.flatMap((sql) => sql`SELECT version FROM issuing_changes WHERE id = 1`),
  Effect.map(versionOf)
)

/**
 * Bumps the version inside the caller's transaction and, on PostgreSQL with `notify` (the default),
 * notifies it (delivered at commit, in commit order: the row lock orders the versions as the
 * commits). Without `notify` (engines without LISTEN/NOTIFY) other nodes learn of it from the row.
 * Returns the new version.
 */
export const publishChange = (topic: ChangeTopic, id: string, notify = true) =>
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const rows = yield* sql`UPDATE issuing_changes SET version = version + 1 WHERE id = 1 RETURNING version`
    const version = Option.getOrElse(versionOf(rows), () => "0")
    if (!notify) return BigInt(version)
    yield* sql.onDialectOrElse({
      pg: () => sql`SELECT pg_notify(${CHANGE_NOTIFY_CHANNEL}, ${`${version} ${topic} ${id}`})`.pipe(Effect.asVoid),
      orElse: () => Effect.void
    })
    return BigInt(version)
  })
