import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { EventFilter, IssuingEvent } from "@issuing/core"
import { Schema } from "effect"
import { CreatedParams, ListOf, PagingParams } from "./Common.js"
import { ProgramScoped } from "./Security.js"
import { NotFoundFailure } from "../errors.js"

/** Events of the program, newest first (filter `type`); the record is also the payload webhooks deliver. */
export class EventsApi extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/events")
      .setUrlParams(Schema.Struct({ ...PagingParams, ...CreatedParams, ...EventFilter.fields }))
      .addSuccess(ListOf(IssuingEvent))
  )
  .add(
    HttpApiEndpoint.get("get", "/events/:event_id")
      .setPath(Schema.Struct({ event_id: Schema.String }))
      .addError(NotFoundFailure)
      .addSuccess(IssuingEvent)
  )
  .middleware(ProgramScoped)
  .prefix("/v1") {}
