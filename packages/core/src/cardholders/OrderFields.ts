import { type OrderField, orderFields } from "../platform/Paging.js"

/** Order fields of GET /v1/cardholders (docs/cardholders.md). */
export const CARDHOLDER_ORDER_FIELDS = orderFields({ created_at: "created_at", updated_at: "updated_at" }, { newest: "created_at" })
export type CardholderOrderField = OrderField<typeof CARDHOLDER_ORDER_FIELDS>
