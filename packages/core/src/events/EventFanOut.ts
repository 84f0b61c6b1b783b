import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { IssuingEvent } from "./Records.js"

/**
 * What is written with a change's events, in its transaction: their webhook deliveries, one per
 * enabled subscription of the event's program holding its type. A port events own and the webhook
 * store provides (the composition root binds it, core/src/Stores.ts), so that events stay below
 * webhooks (docs/architecture.md#layers).
 */
export interface EventFanOutService {
  /** Fan-out of several events (of one change) in one statement. */
  readonly enqueueEvents: (events: ReadonlyArray<IssuingEvent>) => Effect.Effect<number, SqlError.SqlError>
  /**
   * Where the store can: appends the events of a change that writes nothing else (a lone emit)
   * and queues their deliveries as ONE call that is all-or-nothing by itself, to run outside any
   * transaction (PostgreSQL: one statement in autocommit, one round trip instead of BEGIN, two
   * statements and COMMIT). None where it cannot: SQLite's lone writes share the group-commit lane.
   */
  readonly appendAndEnqueueAtOnce: Option.Option<(events: ReadonlyArray<IssuingEvent>) => Effect.Effect<number, SqlError.SqlError>>
}

/** The events' fan-out port. */
export class EventFanOut extends Context.Tag("@issuing/core/EventFanOut")<EventFanOut, EventFanOutService>() {}
