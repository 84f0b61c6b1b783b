import { Layer } from "effect"
import type { AccessStore } from "../access/AccessStore.js"
import type { CardStore } from "../cards/CardStore.js"
import { SqlCardStoreLive } from "../cards/SqlCardStore.js"
import { SqlAccessStoreLive } from "../access/SqlAccessStore.js"
import type { EventStore } from "../events/EventStore.js"
import { SqlEventStoreLive } from "../events/SqlEventStore.js"
import type { IdempotencyStore } from "../idempotency/IdempotencyStore.js"
import { SqlIdempotencyStoreLive } from "../idempotency/SqlIdempotencyStore.js"
import type { LedgerStore } from "../ledger/LedgerStore.js"
import { SqlLedgerStoreLive } from "../ledger/SqlLedgerStore.js"
import { SqlWebhookStoreLive } from "../webhooks/SqlWebhookStore.js"
import type { WebhookStore } from "../webhooks/WebhookStore.js"
import { SqlTransactorLive, type Transactor } from "./Transactor.js"

/** Every storage port the domain needs. A store package provides all of them. */
export type IssuingStores = AccessStore | CardStore | IdempotencyStore | EventStore | LedgerStore | WebhookStore | Transactor

/** The ports implemented once over SqlClient, for both dialects. */
export const SqlStoresLive = Layer.mergeAll(
  SqlAccessStoreLive,
  SqlCardStoreLive,
  SqlIdempotencyStoreLive,
  SqlEventStoreLive,
  SqlLedgerStoreLive,
  SqlWebhookStoreLive,
  SqlTransactorLive
)
