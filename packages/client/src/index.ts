/** @issuing/client: the issuing platform's /v1 API as Promises over fetch (the Effect client is @issuing/client/effect). */
export * from "./Client.js"
export {
  AuthenticationError,
  BusinessRuleError,
  ConflictError,
  ConnectionError,
  type ErrorEnvelope,
  InternalServerError,
  InvalidRequestError,
  IssuingApiError,
  IssuingError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  TimeoutError
} from "./errors.js"
export { type Page, PageList, type PageParams } from "./pagination.js"
export { type ClientOptions, type RequestOptions, retryAfterMs } from "./transport.js"
export { EVENT_TYPES, type EventObjects, type EventOf, type EventType, type WebhookEvent } from "./events.js"
export { verifyWebhook, type WebhookHeaders, WebhookVerificationError } from "./webhooks.js"
export { withCardDisplayFrameSrc } from "./csp.js"
export type { CurrencyCode } from "./currency.js"
