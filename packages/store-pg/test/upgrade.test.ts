import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import * as PgStore from "@issuing/store-pg"
import { Effect } from "effect"
import * as fs from "node:fs"
import { createTestDatabase } from "../../../test/support/databases.js"
import { migrations } from "../src/migrations/index.js"

/**
 * A database migrated by an earlier release must reach the current schema when the store starts:
 * the Migrator runs only ids above the latest applied one (a new migration numbered below an
 * applied one would silently never run there), and the stored functions are applied from their
 * files (docs/architecture.md#stored-functions) whatever the earlier migrations left.
 *
 * Where a release may have stopped: the first release (up to 0030), the last migration (the
 * release before function files, whose functions migrations alone made), and every migration that
 * drops a function (a signature replaced: an older overload must not survive). Every migration id
 * as a stop was measured at 108 s of this 2-core machine for the same answer: the migrations after
 * a stop run as they run on a fresh database.
 */
const FIRST_RELEASE = "0030_webhooks"
const stops = Object.keys(migrations)
  .sort()
  .filter(
    (id, i, ids) =>
      id === FIRST_RELEASE ||
      i === ids.length - 1 ||
      fs.readFileSync(new URL(`../src/migrations/${id}.ts`, import.meta.url), "utf8").includes("DROP FUNCTION")
  )

/** Every `issuing_` function: its signature, result and the md5 of its body. */
const functionSet = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ fn: string }>`SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') ' || pg_get_function_result(p.oid)
      || ' ' || md5(p.prosrc) AS fn
    FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'issuing\\_%' ORDER BY 1`
).pipe(Effect.map((rows) => rows.map((row) => row.fn)))

const appliedIds = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ migration_id: number }>`SELECT migration_id FROM issuing_migrations ORDER BY migration_id`
).pipe(Effect.map((rows) => rows.map((row) => Number(row.migration_id))))

/** Runs `effect` on a fresh database of its own, dropped after. */
const onFreshDatabase = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const database = yield* Effect.acquireRelease(
        Effect.promise(() => createTestDatabase("postgres")),
        (database) => Effect.promise(() => database.drop())
      )
      return yield* Effect.provide(effect, PgStore.clientLayer({ url: database.url, maxConnections: 1 }))
    })
  )

/** The migrations up to `id`, as a release that shipped them applied them (with no function files). */
const migrateThrough = (id: string) =>
  Migrator.make({})({
    loader: Migrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([other]) => other <= id))),
    table: "issuing_migrations"
  })

const allIds = Object.keys(migrations)
  .map((id) => Number(id.slice(0, 4)))
  .sort((a, b) => a - b)

describe("upgrading a PostgreSQL database migrated by an earlier release", () => {
  it.live(
    `from ${stops.join(", ")}: applies the newer migrations and ends with a fresh database's functions`,
    () =>
      Effect.gen(function* () {
        const fresh = yield* onFreshDatabase(Effect.zipRight(PgStore.migrate, functionSet))
        expect(fresh.find((fn) => fn.startsWith("issuing_post_transfer("))).toBeDefined()
        const upgraded = yield* Effect.forEach(
          stops,
          (id) =>
            onFreshDatabase(
              Effect.gen(function* () {
                yield* migrateThrough(id)
                yield* PgStore.migrate
                return { id, ids: yield* appliedIds, functions: yield* functionSet }
              })
            ),
          { concurrency: 2 }
        )
        for (const { id, ids, functions } of upgraded) {
          expect(ids, `migrated up to ${id}`).toEqual(allIds)
          expect(functions, `migrated up to ${id}`).toEqual(fresh)
        }
      }),
    { timeout: 120_000 }
  )

  it.live(
    "applies a function file again when its function was changed, and drops what no file defines",
    () =>
      onFreshDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* PgStore.migrate
          const fresh = yield* functionSet
          // An earlier version of a file (another checksum, another signature), a trigger's
          // function edited by hand (its checksum as recorded), and a function whose file is gone.
          yield* sql`UPDATE issuing_function_checksums SET checksum = 'earlier' WHERE name = 'issuing_post_transfers'`
          yield* sql`DROP FUNCTION issuing_post_transfers(jsonb, text)`
          yield* sql`CREATE FUNCTION issuing_post_transfers(p_postings jsonb) RETURNS integer LANGUAGE sql AS 'SELECT 1'`
          yield* sql`CREATE OR REPLACE FUNCTION issuing_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`
          yield* sql`CREATE FUNCTION issuing_retired() RETURNS integer LANGUAGE sql AS 'SELECT 1'`
          yield* sql`INSERT INTO issuing_function_checksums (name, checksum, body_md5) VALUES ('issuing_retired', 'x', 'x')`
          expect(yield* functionSet).not.toEqual(fresh)
          yield* PgStore.migrate
          expect(yield* functionSet).toEqual(fresh)
          expect(yield* sql`SELECT name FROM issuing_function_checksums WHERE name = 'issuing_retired'`).toEqual([])
          // Nothing changed since: nothing is applied.
          const recorded = sql`SELECT name, checksum, applied_at::text FROM issuing_function_checksums ORDER BY name`
          const before = yield* recorded
          yield* PgStore.migrate
          expect(yield* recorded).toEqual(before)
        })
      ),
    { timeout: 60_000 }
  )

  it.live(
    "leaves the functions of a database a newer release migrated as they are",
    () =>
      onFreshDatabase(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* PgStore.migrate
          yield* sql`INSERT INTO issuing_migrations (migration_id, name) VALUES (9999, 'a_newer_release')`
          yield* sql`CREATE OR REPLACE FUNCTION issuing_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`
          const newer = yield* functionSet
          expect(yield* PgStore.migrate).toEqual([])
          expect(yield* functionSet).toEqual(newer)
        })
      ),
    { timeout: 60_000 }
  )
})
