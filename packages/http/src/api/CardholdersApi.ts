import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Cardholder, CardholderFilter, CreateCardholder, RecordVerification, UpdateCardholder } from "@issuing/core"
import { Schema } from "effect"
import { ListOf, PagingParams, patch, post } from "./Common.js"
import { ProgramScoped } from "./Security.js"
import { NotFoundFailure } from "../errors.js"

// Path ids stay plain strings: a malformed one names no resource, so it is a 404 (docs/api.md).
const CardholderPath = Schema.Struct({ cardholder_id: Schema.String })

/** Program-scoped: the program's cardholders and the outcome of its own verification of them (docs/cardholders.md). */
export class CardholdersApi extends HttpApiGroup.make("cardholders")
  .add(post("create", "/cardholders").setPayload(CreateCardholder).addSuccess(Cardholder))
  .add(
    HttpApiEndpoint.get("list", "/cardholders")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...CardholderFilter.fields }))
      .addSuccess(ListOf(Cardholder))
  )
  .add(HttpApiEndpoint.get("get", "/cardholders/:cardholder_id").setPath(CardholderPath).addError(NotFoundFailure).addSuccess(Cardholder))
  .add(
    patch("update", "/cardholders/:cardholder_id")
      .setPath(CardholderPath)
      .setPayload(UpdateCardholder)
      .addError(NotFoundFailure)
      .addSuccess(Cardholder)
  )
  .add(
    post("verify", "/cardholders/:cardholder_id/verification")
      .setPath(CardholderPath)
      .setPayload(RecordVerification)
      .addError(NotFoundFailure)
      .addSuccess(Cardholder)
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}
