import type { InvalidRequest } from "../platform/Errors.js"
import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { CreatedWindow, PageWindow } from "../platform/Paging.js"
import type { EventOrderField } from "./OrderFields.js"
import type { EventFilter, IssuingEvent } from "./Records.js"

/** Storage port for events: the outbox the webhook worker delivers from. */
export interface EventStoreService {
  /** Appends an event; must run inside the transaction of the change it describes. */
  readonly append: (event: IssuingEvent) => Effect.Effect<void, SqlError.SqlError>
  /** Appends several events (of one change) in one statement, in order. */
  readonly appendAll: (events: ReadonlyArray<IssuingEvent>) => Effect.Effect<void, SqlError.SqlError>
  readonly find: (programId: string, eventId: string) => Effect.Effect<Option.Option<IssuingEvent>, SqlError.SqlError>
  readonly list: (
    programId: string,
    filter: EventFilter & { readonly created?: CreatedWindow | undefined },
    window: PageWindow<EventOrderField>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<IssuingEvent>; readonly total: number }, SqlError.SqlError | InvalidRequest>
}

/** The event storage port. */
export class EventStore extends Context.Tag("@issuing/core/EventStore")<EventStore, EventStoreService>() {}
