import { type OrderField, orderFields } from "../platform/Paging.js"

/** Order fields of GET /v1/programs (docs/api.md#paging). */
export const PROGRAM_ORDER_FIELDS = orderFields(
  { created_at: "created_at", updated_at: "updated_at", name: "name" },
  { newest: "created_at" }
)
export type ProgramOrderField = OrderField<typeof PROGRAM_ORDER_FIELDS>

/** Order fields of GET /v1/api-keys (docs/api.md#paging). */
export const API_KEY_ORDER_FIELDS = orderFields({ created_at: "created_at", name: "name" }, { newest: "created_at" })
export type ApiKeyOrderField = OrderField<typeof API_KEY_ORDER_FIELDS>
