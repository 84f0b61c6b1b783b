import type { SqlClient } from "@effect/sql"
import { Layer } from "effect"
import type { AccessStore } from "../access/AccessStore.js"
import type { AuthorizationEndpointStore } from "../cards/AuthorizationEndpointStore.js"
import type { CardStore } from "../cards/CardStore.js"
import { SqlAuthorizationEndpointStoreLive } from "../cards/SqlAuthorizationEndpointStore.js"
import type { ChangeFeed } from "../changes/ChangeFeed.js"
import { SqlCardStoreLive } from "../cards/SqlCardStore.js"
import { SqlAccessStoreLive } from "../access/SqlAccessStore.js"
import type { EventStore } from "../events/EventStore.js"
import { SqlEventStoreLive } from "../events/SqlEventStore.js"
import type { IdempotencyStore } from "../idempotency/IdempotencyStore.js"
import { SqlIdempotencyStoreLive } from "../idempotency/SqlIdempotencyStore.js"
import type { LedgerPosting, LedgerStore } from "../ledger/LedgerStore.js"
import type { OAuthStore } from "../oauth/OAuthStore.js"
import { SqlOAuthStoreLive } from "../oauth/SqlOAuthStore.js"
import { SqlLedgerStoreLive } from "../ledger/SqlLedgerStore.js"
import { SqlWebhookStoreLive } from "../webhooks/SqlWebhookStore.js"
import type { WebhookStore } from "../webhooks/WebhookStore.js"
import { SqlTransactorLive, type Transactor } from "./Transactor.js"
import type { WriteLane } from "./WriteLane.js"

/** Every storage port the domain needs. A store package provides all of them (the change feed its own way). */
export type IssuingStores =
  | AccessStore
  | AuthorizationEndpointStore
  | ChangeFeed
  | CardStore
  | IdempotencyStore
  | EventStore
  | LedgerStore
  | OAuthStore
  | WebhookStore
  | Transactor
  | WriteLane

/** The ports implemented once over SqlClient, for both dialects. */
const SqlPortsLive = Layer.mergeAll(
  SqlAccessStoreLive,
  SqlCardStoreLive,
  SqlAuthorizationEndpointStoreLive,
  SqlIdempotencyStoreLive,
  SqlEventStoreLive,
  SqlLedgerStoreLive,
  SqlWebhookStoreLive,
  SqlOAuthStoreLive
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
