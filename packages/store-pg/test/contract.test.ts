import { storeContract } from "@issuing/core/testing"
import * as PgStore from "@issuing/store-pg"
import { Effect, Layer } from "effect"
import { createTestDatabase } from "../../../test/support/databases.js"

// Every port contract gets its own fresh database on the test PostgreSQL server, dropped afterwards.
storeContract("PostgreSQL", () =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.promise(() => createTestDatabase("postgres")),
        (database) => Effect.promise(() => database.drop())
      ),
      (database) => PgStore.layer({ url: database.url, maxConnections: 4 })
    )
  )
)
