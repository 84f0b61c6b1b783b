import { Layer } from "effect"
import type { AccessStore } from "../access/AccessStore.js"
import { SqlAccessStoreLive } from "../access/SqlAccessStore.js"
import type { EventStore } from "../events/EventStore.js"
import { SqlEventStoreLive } from "../events/SqlEventStore.js"
import type { IdempotencyStore } from "../idempotency/IdempotencyStore.js"
import { SqlIdempotencyStoreLive } from "../idempotency/SqlIdempotencyStore.js"
import { SqlTransactorLive, type Transactor } from "./Transactor.js"

/** Every storage port the domain needs. A store package provides all of them. */
export type IssuingStores = AccessStore | IdempotencyStore | EventStore | Transactor

/** The ports implemented once over SqlClient, for both dialects. */
export const SqlStoresLive = Layer.mergeAll(
  SqlAccessStoreLive,
  SqlIdempotencyStoreLive,
  SqlEventStoreLive,
  SqlTransactorLive
)
