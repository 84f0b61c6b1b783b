import { type OrderField, orderFields } from "../platform/Paging.js"

/** GET /v1/disputes orders by time only (docs/disputes.md#listing): creation or last change. */
export const DISPUTE_ORDER_FIELDS = orderFields({ created_at: "created_at", updated_at: "updated_at" }, { newest: "created_at" })
export type DisputeOrderField = OrderField<typeof DISPUTE_ORDER_FIELDS>
