import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import {
  AuthorizationEndpoint,
  AuthorizationEndpointWithSecret,
  CreateAuthorizationEndpoint,
  UpdateAuthorizationEndpoint
} from "@issuing/core"
import { Schema } from "effect"
import { ListOf, PagingParams, patch, post } from "./Common.js"
import { ProgramScoped } from "./Security.js"
import { NotFoundFailure } from "../errors.js"

// Path ids stay plain strings: a malformed one names no resource, so it is a 404 (docs/api.md).
const EndpointPath = Schema.Struct({ authorization_endpoint_id: Schema.String })

/**
 * Program-scoped: the program's authorization endpoint, asked in real time whether to approve an
 * authorization (docs/card-transactions.md#real-time-decisions). One per program: a second POST is
 * 409 (declared by `post` for every POST).
 */
export class AuthorizationEndpointsApi extends HttpApiGroup.make("authorizationEndpoints")
  .add(post("create", "/authorization-endpoints").setPayload(CreateAuthorizationEndpoint).addSuccess(AuthorizationEndpointWithSecret))
  .add(
    HttpApiEndpoint.get("list", "/authorization-endpoints")
      .setUrlParams(Schema.Struct(PagingParams))
      .addSuccess(ListOf(AuthorizationEndpoint))
  )
  .add(
    HttpApiEndpoint.get("get", "/authorization-endpoints/:authorization_endpoint_id")
      .setPath(EndpointPath)
      .addError(NotFoundFailure)
      .addSuccess(AuthorizationEndpoint)
  )
  .add(
    patch("update", "/authorization-endpoints/:authorization_endpoint_id")
      .setPath(EndpointPath)
      .addError(NotFoundFailure)
      .setPayload(UpdateAuthorizationEndpoint)
      .addSuccess(AuthorizationEndpoint)
  )
  .add(
    HttpApiEndpoint.del("delete", "/authorization-endpoints/:authorization_endpoint_id")
      .setPath(EndpointPath)
      .addError(NotFoundFailure)
      .addSuccess(AuthorizationEndpoint)
  )
  .add(
    post("rotateSecret", "/authorization-endpoints/:authorization_endpoint_id/rotate-secret")
      .setPath(EndpointPath)
      .addError(NotFoundFailure)
      .addSuccess(AuthorizationEndpointWithSecret)
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}
