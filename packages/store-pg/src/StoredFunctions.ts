import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"

/** A stored function's living text: `src/functions/<name>.sql`, one `CREATE OR REPLACE FUNCTION` of `name`. */
export interface FunctionFile {
  readonly name: string
  readonly text: string
}

/** The checksum a file is recorded under: SHA-256 of its text, comments included. */
export const functionChecksum = (text: string): string => crypto.createHash("sha256").update(text).digest("hex")

/**
 * The files applied, by function name: the checksum of the text applied and the md5 of the body
 * it left in `pg_proc`, so a function changed since by anything else (a migration, a hand edit)
 * is applied again too.
 */
const CHECKSUMS_TABLE = `CREATE TABLE IF NOT EXISTS issuing_function_checksums (
  name text PRIMARY KEY,
  checksum text NOT NULL,
  body_md5 text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`

/**
 * Applies the function files after the versioned migrations, in their transaction and under their
 * lock (docs/architecture.md#stored-functions), as Flyway applies its repeatable `R__` files: a
 * file runs when its checksum is not the one recorded for its function, or when the function's
 * body is no longer the one the file left. Before a file runs, the other versions of its function
 * are dropped (a trigger's function, whose signature cannot change, is replaced in place), so
 * arguments and results may change and no older overload stays behind; a function whose file was
 * deleted is dropped. Returns the names applied.
 *
 * A database that has a migration this code does not know belongs to a newer release: its
 * functions are that release's, and an older process starting against it (a rolling restart)
 * leaves them as they are.
 */
export const applyFunctionFiles = (files: ReadonlyArray<FunctionFile>, latestMigrationId: number) =>
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    yield* sql.unsafe(CHECKSUMS_TABLE)
    const [latest] = yield* sql<{ id: number | null }>`SELECT max(migration_id) AS id FROM issuing_migrations`
    const databaseMigrationId = Number(latest?.id ?? 0)
    if (databaseMigrationId > latestMigrationId) {
      yield* Effect.logWarning(
        `The database has migration ${databaseMigrationId}, newer than this release's ${latestMigrationId}: its stored functions are left as they are`
      )
      return [] as ReadonlyArray<string>
    }
    // Each recorded function with whether its one version in pg_proc still has the body recorded.
    const recorded = yield* sql<{ name: string; checksum: string; intact: boolean }>`
      SELECT f.name, f.checksum,
             (SELECT count(*) = 1 AND bool_and(md5(p.prosrc) = f.body_md5) FROM pg_proc p
              WHERE p.proname = f.name AND p.pronamespace = current_schema()::regnamespace) AS intact
      FROM issuing_function_checksums f`
    const byName = new Map(recorded.map((row) => [row.name, row]))
    const applied: Array<string> = []
    for (const file of files) {
      const checksum = functionChecksum(file.text)
      const row = byName.get(file.name)
      if (row !== undefined && row.checksum === checksum && row.intact === true) continue
      yield* dropVersions(sql, file.name, false)
      yield* sql.unsafe(file.text)
      yield* sql`INSERT INTO issuing_function_checksums (name, checksum, body_md5, applied_at)
        SELECT ${file.name}, ${checksum}, md5(p.prosrc), now() FROM pg_proc p
        WHERE p.proname = ${file.name} AND p.pronamespace = current_schema()::regnamespace
        ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, body_md5 = excluded.body_md5, applied_at = excluded.applied_at`
      applied.push(file.name)
    }
    const names = new Set(files.map((file) => file.name))
    for (const row of recorded) {
      if (names.has(row.name)) continue
      yield* dropVersions(sql, row.name, true)
      yield* sql`DELETE FROM issuing_function_checksums WHERE name = ${row.name}`
    }
    return applied as ReadonlyArray<string>
  })

/**
 * Drops every version of the function `name` in the current schema; a trigger's function only when
 * `triggers` (its file deleted: a migration has dropped its triggers first, else the drop fails).
 */
const dropVersions = (sql: SqlClient.SqlClient, name: string, triggers: boolean) =>
  Effect.gen(function* () {
    const versions = yield* sql<{ signature: string }>`
      SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
      WHERE p.proname = ${name} AND p.pronamespace = current_schema()::regnamespace
        AND (${triggers} OR p.prorettype <> 'trigger'::regtype)`
    for (const { signature } of versions) yield* sql.unsafe(`DROP FUNCTION ${signature}`)
  })
