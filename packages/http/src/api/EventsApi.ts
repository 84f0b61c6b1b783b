import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ListOf, PagingParams, Timestamp } from "./Common.js"
import { ProgramAuth } from "./Security.js"

/** The event record (CONTRACT §5): also the payload webhooks deliver. */
export const Event = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("event"),
  type: Schema.String,
  program_id: Schema.String,
  created_at: Timestamp,
  data: Schema.Struct({ object: Schema.Unknown })
}).annotations({ identifier: "Event" })

/** Events of the program, newest first (filter `type`). */
export class EventsApi extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/events")
      .setUrlParams(Schema.Struct({ ...PagingParams, type: Schema.optional(Schema.String) }))
      .addSuccess(ListOf(Event))
  )
  .add(HttpApiEndpoint.get("get", "/events/:event_id").setPath(Schema.Struct({ event_id: Schema.String })).addSuccess(Event))
  .middleware(ProgramAuth)
  .prefix("/v1")
{}
