import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { findOwned } from "../platform/FindOwned.js"
import { type CreatedWindow, type Page, type PageRequest, pageOf, toWindow } from "../platform/Paging.js"
import { EVENT_ORDER_FIELDS, type EventOrderField } from "./OrderFields.js"
import { nowIso } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { commitWrite, WriteLane } from "../sql/WriteLane.js"
import { EventFanOut } from "./EventFanOut.js"
import { EventStore } from "./EventStore.js"
import { type EventFilter, type EventType, type IssuingEvent, newEvent } from "./Records.js"

/** Events: written in the transaction of the change they describe, read by the API and the webhook worker. */
export class Events extends Effect.Service<Events>()("@issuing/core/Events", {
  effect: Effect.gen(function* () {
    const store = yield* EventStore
    const fanOut = yield* EventFanOut
    const transactor = yield* Transactor
    const lane = yield* WriteLane

    const emitAll = (
      programId: string,
      items: ReadonlyArray<{ readonly type: EventType; readonly object: unknown }>
    ): Effect.Effect<ReadonlyArray<IssuingEvent>, SqlError.SqlError> =>
      Effect.gen(function* () {
        const createdAt = yield* nowIso
        const batch = items.map(({ object, type }) => newEvent(programId, type, createdAt, object))
        // The events and their webhook deliveries (one per enabled subscription to each type)
        // commit together: in the caller's transaction, else — a lone emit — in one call where
        // the store has one (PostgreSQL: one statement), or through the store's write lane.
        const outer = yield* Effect.serviceOption(SqlClient.TransactionConnection)
        const atOnce = fanOut.appendAndEnqueueAtOnce
        if (Option.isNone(outer) && Option.isSome(atOnce)) yield* lane.submit(atOnce.value(batch), { atomic: true })
        else yield* commitWrite(lane, transactor, Effect.zipRight(store.appendAll(batch), fanOut.enqueueEvents(batch)))
        return batch
      })

    return {
      /**
       * Records the events of one change, in order (one insert, one webhook fan-out statement);
       * call it inside the change's transaction.
       */
      emitAll,
      /** Records an event about `object`; call it inside the change's transaction. */
      emit: (programId: string, type: EventType, object: unknown): Effect.Effect<IssuingEvent, SqlError.SqlError> =>
        Effect.map(emitAll(programId, [{ type, object }]), (events) => events[0]!),
      /** One event of the program (404 naming event_id). */
      get: (programId: string, eventId: string) =>
        findOwned(eventId, { resource: "event", param: "event_id" }, (id) => store.find(programId, id)),
      /** The program's events, newest first by default, optionally of one type. */
      list: (
        programId: string,
        filter: EventFilter & { readonly created?: CreatedWindow | undefined },
        page: PageRequest<EventOrderField>
      ) =>
        Effect.suspend(() => {
          const window = toWindow(page, EVENT_ORDER_FIELDS)
          return store
            .list(programId, filter, window)
            .pipe(Effect.map(({ rows, total }): Page<IssuingEvent> => pageOf(window, rows, total)))
        })
    }
  })
}) {}
