import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { NotFound } from "../platform/Errors.js"
import { isUuid } from "../platform/Ids.js"
import { type Page, type PageRequest, toWindow } from "../platform/Paging.js"
import { nowIso } from "../platform/Time.js"
import { Transactor } from "../sql/Transactor.js"
import { WebhookStore } from "../webhooks/WebhookStore.js"
import { EventStore } from "./EventStore.js"
import { type EventType, type IssuingEvent, newEvent } from "./Records.js"

/** Events: written in the transaction of the change they describe, read by the API and the webhook worker. */
export class Events extends Effect.Service<Events>()("@issuing/core/Events", {
  effect: Effect.gen(function*() {
    const store = yield* EventStore
    const webhooks = yield* WebhookStore
    const transactor = yield* Transactor

    const emitAll = (
      programId: string,
      items: ReadonlyArray<{ readonly type: EventType; readonly object: unknown }>
    ): Effect.Effect<ReadonlyArray<IssuingEvent>, SqlError.SqlError> =>
      Effect.gen(function*() {
        const createdAt = yield* nowIso
        const batch = items.map(({ object, type }) => newEvent(programId, type, createdAt, object))
        // The events and their webhook deliveries (one per enabled subscription to each type)
        // commit together; the caller's transaction is joined, or one is opened for a lone emit.
        const write = Effect.zipRight(store.appendAll(batch), webhooks.enqueueEvents(batch))
        const outer = yield* Effect.serviceOption(SqlClient.TransactionConnection)
        yield* Option.isSome(outer) ? write : transactor.withTransaction(write)
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
      get: (programId: string, eventId: string) =>
        Effect.gen(function*() {
          const missing = new NotFound({ message: "No such event.", param: "event_id" })
          if (!isUuid(eventId)) return yield* missing
          const event = yield* store.find(programId, eventId.toLowerCase())
          return yield* Option.match(event, { onNone: () => Effect.fail(missing), onSome: Effect.succeed })
        }),
      list: (programId: string, filter: { readonly type?: string | undefined }, page: PageRequest) =>
        store.list(programId, filter, toWindow(page)).pipe(
          Effect.map(({ rows, total }): Page<IssuingEvent> => ({ data: rows, total_count: total }))
        )
    }
  })
}) {}
