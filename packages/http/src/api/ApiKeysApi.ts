import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { ApiKey, ApiKeyWithSecret, CreateApiKey } from "@issuing/core"
import { Schema } from "effect"
import { ListOf, PagingParams, post } from "./Common.js"
import { OrganizationScoped } from "./Security.js"
import { NotFoundFailure } from "../errors.js"

/** Organization-scoped, admin only: API keys of the caller's organization. */
export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(post("create", "/api-keys").setPayload(CreateApiKey).addSuccess(ApiKeyWithSecret))
  .add(HttpApiEndpoint.get("list", "/api-keys").setUrlParams(Schema.Struct(PagingParams)).addSuccess(ListOf(ApiKey)))
  .add(
    HttpApiEndpoint.del("revoke", "/api-keys/:api_key_id")
      .setPath(Schema.Struct({ api_key_id: Schema.String }))
      .addError(NotFoundFailure)
      .addSuccess(ApiKey)
  )
  .middleware(OrganizationScoped)
  .prefix("/v1") {}
