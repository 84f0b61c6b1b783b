import { type OrderField, orderFields } from "../platform/Paging.js"

/** Order fields of GET /v1/oauth-clients (docs/oauth.md). */
export const OAUTH_CLIENT_ORDER_FIELDS = orderFields({ created_at: "created_at", name: "name" }, { newest: "created_at" })
export type OAuthClientOrderField = OrderField<typeof OAUTH_CLIENT_ORDER_FIELDS>

/** Order fields of GET /v1/oauth/grants (docs/oauth.md#incident-response). */
export const OAUTH_GRANT_ORDER_FIELDS = orderFields({ created_at: "created_at" }, { newest: "created_at" })
export type OAuthGrantOrderField = OrderField<typeof OAUTH_GRANT_ORDER_FIELDS>
