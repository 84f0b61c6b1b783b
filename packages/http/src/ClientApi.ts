/** The API definition alone, for clients (`@issuing/http/api`): no server, no store. */
export { IssuingApi } from "./Api.js"
export { ApiKeysApi } from "./api/ApiKeysApi.js"
export { AuthorizationEndpointsApi } from "./api/AuthorizationEndpointsApi.js"
export { CardEmbedApi, CardsApi, SimulateAuthorizationsApi } from "./api/CardsApi.js"
export { EventsApi } from "./api/EventsApi.js"
export { FinancialAccountsApi, SimulateTransfersApi, TransactionsApi, TransfersApi, WalletsApi } from "./api/LedgerApi.js"
export { MetaApi } from "./api/MetaApi.js"
export { ProgramsApi } from "./api/ProgramsApi.js"
export { OrganizationScoped, ProgramScoped } from "./api/Security.js"
export { WebhookPortalApi, WebhookPortalSessionsApi } from "./api/WebhookPortalApi.js"
export { WebhookDeliveriesApi, WebhookSubscriptionsApi } from "./api/WebhooksApi.js"
export {
  ApiFailure,
  type ApiFailureAt,
  AuthenticationFailure,
  BusinessRuleFailure,
  ConflictFailure,
  type ErrorCode,
  ErrorEnvelope,
  InternalFailure,
  InvalidRequestFailure,
  NotFoundFailure,
  PermissionFailure,
  RateLimitFailure,
  TooLargeFailure
} from "./errors.js"
