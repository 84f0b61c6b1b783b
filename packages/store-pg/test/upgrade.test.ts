import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import * as PgStore from "@issuing/store-pg"
import { Effect, Layer } from "effect"
import { createTestDatabase } from "../../../test/support/databases.js"
import { migrations } from "../src/migrations/index.js"

/**
 * A database migrated by an earlier release (every migration up to 0030) must reach the current
 * schema when the store starts: the Migrator runs only ids above the latest applied one, so a new
 * migration numbered below 0030 would silently never run there.
 */
describe("upgrading a PostgreSQL database migrated by an earlier release", () => {
  it.live(
    "applies the newer migrations and replaces the posting function",
    () =>
      Effect.gen(function* () {
        const database = yield* Effect.acquireRelease(
          Effect.promise(() => createTestDatabase("postgres")),
          (database) => Effect.promise(() => database.drop())
        )
        // What the first release shipped; every later migration must still run on top of it.
        const firstRelease = [
          "0001_access",
          "0002_idempotency",
          "0003_events",
          "0010_ledger",
          "0011_ledger_posting",
          "0020_cards",
          "0030_webhooks"
        ]
        const earlier = Object.fromEntries(Object.entries(migrations).filter(([id]) => firstRelease.includes(id)))
        yield* Migrator.make({})({ loader: Migrator.fromRecord(earlier), table: "issuing_migrations" }).pipe(
          Effect.provide(PgStore.clientLayer({ url: database.url, maxConnections: 2 }))
        )
        const applied = yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const ids = yield* sql<{ migration_id: number }>`SELECT migration_id FROM issuing_migrations ORDER BY migration_id`
          const signatures = yield* sql<{ args: string }>`SELECT pg_get_function_identity_arguments(oid) AS args
          FROM pg_proc WHERE proname = 'issuing_post_transfer'`
          return { ids: ids.map((row) => Number(row.migration_id)), signatures: signatures.map((row) => row.args) }
        }).pipe(Effect.provide(Layer.orDie(PgStore.layer({ url: database.url, maxConnections: 2 }))))
        expect(applied.ids).toEqual(
          Object.keys(migrations)
            .map((id) => Number(id.slice(0, 4)))
            .sort((a, b) => a - b)
        )
        expect(applied.signatures).toHaveLength(1)
        expect(applied.signatures[0]).toContain("p_transaction_write text")
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
