import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { ROLES } from "@issuing/core"
import { Schema } from "effect"
import { ListOf, Name, PagingParams, Timestamp } from "./Common.js"
import { OrganizationAuth } from "./Security.js"

const apiKeyFields = {
  id: Schema.String,
  object: Schema.Literal("api_key"),
  name: Schema.String,
  role: Schema.Literal(...ROLES),
  program_ids: Schema.NullOr(Schema.Array(Schema.String)),
  pan_reveal: Schema.Boolean,
  created_at: Timestamp,
  revoked_at: Schema.NullOr(Timestamp)
}

/** An API key; never carries its secret. */
export const ApiKey = Schema.Struct(apiKeyFields).annotations({ identifier: "ApiKey" })

/** The API key as created: the only time its secret is shown. */
export const ApiKeyWithSecret = Schema.Struct({ ...apiKeyFields, secret: Schema.String }).annotations({
  identifier: "ApiKeyWithSecret"
})

export const CreateApiKey = Schema.Struct({
  name: Name(),
  role: Schema.Literal(...ROLES),
  program_ids: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  pan_reveal: Schema.optional(Schema.Boolean)
})

/** Organization-scoped, admin only: API keys of the caller's organization. */
export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(HttpApiEndpoint.post("create", "/api-keys").setPayload(CreateApiKey).addSuccess(ApiKeyWithSecret))
  .add(HttpApiEndpoint.get("list", "/api-keys").setUrlParams(Schema.Struct(PagingParams)).addSuccess(ListOf(ApiKey)))
  .add(
    HttpApiEndpoint.del("revoke", "/api-keys/:api_key_id")
      .setPath(Schema.Struct({ api_key_id: Schema.String }))
      .addSuccess(ApiKey)
  )
  .middleware(OrganizationAuth)
  .prefix("/v1")
{}
