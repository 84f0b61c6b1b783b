import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import type { AccessStore } from "./access/AccessStore.js"
import { SqlAccessStoreLive } from "./access/SqlAccessStore.js"
import type { AuthorizationEndpointStore } from "./cards/AuthorizationEndpointStore.js"
import type { CardStore } from "./cards/CardStore.js"
import type { CardholderStore } from "./cardholders/CardholderStore.js"
import { SqlCardholderStoreLive } from "./cardholders/SqlCardholderStore.js"
import { SqlAuthorizationEndpointStoreLive } from "./cards/SqlAuthorizationEndpointStore.js"
import { SqlCardStoreLive } from "./cards/SqlCardStore.js"
import type { DisputeStore } from "./disputes/DisputeStore.js"
import { SqlDisputeStoreLive } from "./disputes/SqlDisputeStore.js"
import type { ChangeFeed } from "./changes/ChangeFeed.js"
import { EventFanOut } from "./events/EventFanOut.js"
import type { EventStore } from "./events/EventStore.js"
import { SqlEventStoreLive } from "./events/SqlEventStore.js"
import type { IdempotencyStore } from "./idempotency/IdempotencyStore.js"
import { SqlIdempotencyStoreLive } from "./idempotency/SqlIdempotencyStore.js"
import type { LedgerPosting, LedgerStore } from "./ledger/LedgerStore.js"
import { SqlLedgerStoreLive } from "./ledger/SqlLedgerStore.js"
import type { OAuthStore } from "./oauth/OAuthStore.js"
import { SqlOAuthStoreLive } from "./oauth/SqlOAuthStore.js"
import { SqlTransactorLive, type Transactor } from "./sql/Transactor.js"
import type { WriteLane } from "./sql/WriteLane.js"
import { SqlWebhookStoreLive } from "./webhooks/SqlWebhookStore.js"
import { WebhookStore } from "./webhooks/WebhookStore.js"

// The composition root of the storage ports: it sits at the top of core, above every feature it
// wires, so that no folder a feature imports points back up (docs/architecture.md#layers).

/** Every storage port the domain needs. A store package provides all of them (the change feed its own way). */
export type IssuingStores =
  | AccessStore
  | AuthorizationEndpointStore
  | ChangeFeed
  | CardStore
  | DisputeStore
  | CardholderStore
  | IdempotencyStore
  | EventStore
  | EventFanOut
  | LedgerStore
  | OAuthStore
  | WebhookStore
  | Transactor
  | WriteLane

/** The events' fan-out is the webhook store's: an event's deliveries are queued in its transaction. */
const EventFanOutLive = Layer.effect(EventFanOut, WebhookStore)

/** The ports implemented once over SqlClient, for both dialects. */
const SqlPortsLive = EventFanOutLive.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      SqlAccessStoreLive,
      SqlCardStoreLive,
      SqlCardholderStoreLive,
      SqlAuthorizationEndpointStoreLive,
      SqlIdempotencyStoreLive,
      SqlEventStoreLive,
      SqlLedgerStoreLive,
      SqlDisputeStoreLive,
      SqlWebhookStoreLive,
      SqlOAuthStoreLive
    )
  )
)

/**
 * The ports over SqlClient, completed by what a store does its own way: its posting of a transfer
 * (`LedgerPosting`) and how it commits a lone write (`WriteLane`). Those parts may use the
 * Transactor and the SqlClient; the result needs only what the SQL ports need besides.
 */
export const sqlStores = <E, R>(storeParts: Layer.Layer<LedgerPosting | WriteLane, E, R>) =>
  SqlPortsLive.pipe(Layer.provideMerge(storeParts), Layer.provideMerge(SqlTransactorLive)) as Layer.Layer<
    Layer.Layer.Success<typeof SqlPortsLive> | LedgerPosting | WriteLane | Transactor,
    E,
    Exclude<R | Layer.Layer.Context<typeof SqlPortsLive>, Transactor | LedgerPosting> | SqlClient.SqlClient
  >
