import { PORT_CONTRACTS, storeContract } from "@issuing/core/testing"
import * as PgStore from "@issuing/store-pg"
import { Effect, Layer } from "effect"
import { describe } from "vitest"
import { createTestDatabase } from "../../../test/support/databases.js"

/** A store layer over its own fresh database on the test PostgreSQL server, dropped afterwards. */
const freshStore = (options: Omit<PgStore.PgOptions, "url"> = {}) =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.promise(() => createTestDatabase("postgres", { migrated: true })),
        (database) => Effect.promise(() => database.drop())
      ),
      (database) => PgStore.layer({ url: database.url, maxConnections: 4, ...options })
    )
  )

// Every port contract gets its own fresh database.
storeContract("PostgreSQL", () => freshStore())

// Without LISTEN/NOTIFY (engines that lack them): the ports whose PostgreSQL side changes.
describe("store contract on PostgreSQL without LISTEN/NOTIFY (notify: false)", () => {
  for (const port of ["changes", "webhooks", "access"]) PORT_CONTRACTS[port]!(port, freshStore({ notify: false }))
})
