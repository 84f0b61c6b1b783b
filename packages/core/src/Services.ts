import { Layer } from "effect"
import { Access } from "./access/Access.js"
import { RateLimiter } from "./access/RateLimiter.js"
import { AuthorizationDecisions } from "./cards/AuthorizationDecisions.js"
import { AuthorizationEndpoints } from "./cards/AuthorizationEndpoints.js"
import { CardAuthorizations } from "./cards/Authorizations.js"
import { Cards } from "./cards/Cards.js"
import { Disputes } from "./disputes/Disputes.js"
import { Cardholders } from "./cardholders/Cardholders.js"
import { Events } from "./events/Events.js"
import { Idempotency } from "./idempotency/Idempotency.js"
import { Ledger } from "./ledger/Ledger.js"
import { NetworkCardMessages } from "./network/CardMessages.js"
import { OAuth } from "./oauth/OAuth.js"
import { OAuthDelegatedAccessLive } from "./oauth/OAuthDelegatedAccess.js"
import { type WebhookSender, WebhookSenderLive } from "./webhooks/WebhookSender.js"
import { Webhooks } from "./webhooks/Webhooks.js"

/** Every domain service; needs the stores, IssuingConfig and Vault. */
export type IssuingServices =
  | Access
  | Cards
  | Cardholders
  | CardAuthorizations
  | AuthorizationEndpoints
  | AuthorizationDecisions
  | RateLimiter
  | Idempotency
  | Events
  | Ledger
  | Disputes
  | Webhooks
  | WebhookSender
  | OAuth
  | NetworkCardMessages

/**
 * Access, once: layers are memoized by reference, and OAuth must share its caches (forgetGrants).
 * Its access tokens and a revoked key's grants are OAuth's, reached through the DelegatedAccess port.
 */
const AccessLive = Access.Default.pipe(Layer.provide(OAuthDelegatedAccessLive), Layer.provide(Events.Default))

// Layers are memoized by reference: cards share the one Ledger (and its group commit) built above.
const CardsLive = Layer.mergeAll(Cards.Default, CardAuthorizations.Default.pipe(Layer.provide(AuthorizationDecisions.Default))).pipe(
  Layer.provide(Ledger.Default.pipe(Layer.provideMerge(Events.Default)))
)

/** The domain services over whatever store is provided. */
export const ServicesLive = Layer.mergeAll(
  AccessLive,
  RateLimiter.Default,
  Idempotency.Default,
  Events.Default,
  AuthorizationEndpoints.Default,
  // Asks the host's EmbeddedAuthorizationDecider instead of stored endpoints when the context holds one.
  AuthorizationDecisions.Default,
  Webhooks.Default.pipe(Layer.provideMerge(WebhookSenderLive)),
  Ledger.Default.pipe(Layer.provide(Events.Default)),
  Disputes.Default.pipe(Layer.provide(Events.Default)),
  Cardholders.Default.pipe(Layer.provide(Events.Default)),
  OAuth.Default.pipe(Layer.provide(Layer.merge(Events.Default, AccessLive))),
  CardsLive,
  // The network's door runs the cards' own operations: the same instances, built once.
  NetworkCardMessages.Default.pipe(Layer.provide(Layer.mergeAll(CardsLive, AccessLive, Idempotency.Default)))
)
