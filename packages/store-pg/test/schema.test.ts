import { describe, it } from "@effect/vitest"
import * as PgStore from "@issuing/store-pg"
import { Effect } from "effect"
import { createTestDatabase } from "../../../test/support/databases.js"
import { expectSchemaFile } from "../../../test/support/schemaFile.js"
import { pgSchemaText } from "./schemaText.js"

/**
 * `packages/store-pg/schema/current.sql` is the schema every migration leaves, in one file: the
 * posting functions as they are now, not spread over the migrations that replaced them.
 */
describe("the checked-in PostgreSQL schema", () => {
  it.live(
    "is what the migrations make (else run npm run schema)",
    () =>
      Effect.gen(function* () {
        const database = yield* Effect.acquireRelease(
          Effect.promise(() => createTestDatabase("postgres")),
          (database) => Effect.promise(() => database.drop())
        )
        const text = yield* PgStore.migrate.pipe(
          Effect.zipRight(pgSchemaText),
          Effect.provide(PgStore.clientLayer({ url: database.url, maxConnections: 1 }))
        )
        expectSchemaFile("packages/store-pg/schema/current.sql", text)
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
