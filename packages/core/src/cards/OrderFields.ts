import { type OrderField, orderFields } from "../platform/Paging.js"

/** Order fields of GET /v1/cards (docs/card-data.md). */
export const CARD_ORDER_FIELDS = orderFields({ created_at: "created_at", updated_at: "updated_at" }, { newest: "created_at" })
export type CardOrderField = OrderField<typeof CARD_ORDER_FIELDS>

/** Order fields of GET /v1/card-audit-records (docs/card-data.md#audit-records). */
export const CARD_AUDIT_ORDER_FIELDS = orderFields({ created_at: "created_at" }, { newest: "created_at" })
export type CardAuditOrderField = OrderField<typeof CARD_AUDIT_ORDER_FIELDS>

/** Order fields of GET /v1/authorization-endpoints (docs/card-transactions.md#real-time-decisions). */
export const AUTHORIZATION_ENDPOINT_ORDER_FIELDS = orderFields(
  { created_at: "created_at", updated_at: "updated_at" },
  { newest: "created_at" }
)
export type AuthorizationEndpointOrderField = OrderField<typeof AUTHORIZATION_ENDPOINT_ORDER_FIELDS>
