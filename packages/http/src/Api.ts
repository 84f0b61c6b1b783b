import { HttpApi, OpenApi } from "@effect/platform"
import { ApiKeysApi } from "./api/ApiKeysApi.js"
import { AuthorizationEndpointsApi } from "./api/AuthorizationEndpointsApi.js"
import { CardholdersApi } from "./api/CardholdersApi.js"
import { CardEmbedApi, CardsApi, SimulateAuthorizationsApi, SimulateTransactionsApi } from "./api/CardsApi.js"
import { DisputesApi, NetworkDisputesApi, SimulateDisputesApi } from "./api/DisputesApi.js"
import { EventsApi } from "./api/EventsApi.js"
import {
  FinancialAccountsApi,
  NetworkTransfersApi,
  SettlementReportsApi,
  SimulateTransfersApi,
  TransactionsApi,
  TransfersApi,
  WalletsApi
} from "./api/LedgerApi.js"
import { MetaApi } from "./api/MetaApi.js"
import { NetworkCardMessagesApi } from "./api/NetworkApi.js"
import { OAuthClientsApi, OAuthGrantsApi, OAuthInteractionsApi, OAuthProtocolApi } from "./api/OAuthApi.js"
import { ProgramsApi } from "./api/ProgramsApi.js"
import { refuseUnknownParameters } from "./api/UnknownParameters.js"
import { WebhookPortalApi, WebhookPortalSessionsApi } from "./api/WebhookPortalApi.js"
import { WebhookDeliveriesApi, WebhookSubscriptionsApi } from "./api/WebhooksApi.js"
import { InternalFailure, InvalidRequestFailure } from "./errors.js"

/**
 * The whole HTTP API: every group, each under /v1 except the public meta routes. Every operation
 * may answer 400 (a request that does not decode) and 500; groups and endpoints declare the rest
 * (api/Security.ts, api/Common.ts and each endpoint's own). Every /v1 operation refuses unknown
 * body fields and query parameters (api/UnknownParameters.ts).
 */
export class IssuingApi extends refuseUnknownParameters(
  HttpApi.make("issuing")
    .add(ProgramsApi)
    .add(ApiKeysApi)
    .add(CardsApi)
    .add(CardEmbedApi)
    .add(SimulateAuthorizationsApi)
    .add(SimulateTransactionsApi)
    .add(WalletsApi)
    .add(CardholdersApi)
    .add(FinancialAccountsApi)
    .add(TransfersApi)
    .add(TransactionsApi)
    .add(SimulateTransfersApi)
    .add(NetworkTransfersApi)
    .add(SettlementReportsApi)
    .add(DisputesApi)
    .add(SimulateDisputesApi)
    .add(NetworkDisputesApi)
    .add(NetworkCardMessagesApi)
    .add(EventsApi)
    .add(WebhookSubscriptionsApi)
    .add(WebhookDeliveriesApi)
    .add(WebhookPortalSessionsApi)
    .add(WebhookPortalApi)
    .add(AuthorizationEndpointsApi)
    .add(OAuthClientsApi)
    .add(OAuthInteractionsApi)
    .add(OAuthGrantsApi)
    .add(OAuthProtocolApi)
    .add(MetaApi)
    .addError(InvalidRequestFailure)
    .addError(InternalFailure)
    .annotate(OpenApi.Title, "Issuing API")
    .annotate(OpenApi.Version, "1.2.0")
) {}
