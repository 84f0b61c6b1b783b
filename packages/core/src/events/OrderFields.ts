import { type OrderField, orderFields } from "../platform/Paging.js"

/** Order fields of GET /v1/events: by time only (docs/ledger.md). */
export const EVENT_ORDER_FIELDS = orderFields({ created_at: "created_at" }, { newest: "created_at" })
export type EventOrderField = OrderField<typeof EVENT_ORDER_FIELDS>
