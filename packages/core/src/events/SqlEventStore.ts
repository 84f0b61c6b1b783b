import { inWindow, listTotal, maintained, maintainedEvery } from "../sql/ListCounts.js"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { fromJson, toIso } from "../platform/Rows.js"
import { createdConditions, pageRows } from "../sql/OrderBy.js"
import { EVENT_ORDER_FIELDS } from "./OrderFields.js"
import { EventStore } from "./EventStore.js"
import { type EventType, eventRow, eventTagsSql, type IssuingEvent } from "./Records.js"
import { eventObject } from "./StoredData.js"

/** A row read with its `tags` (eventTagsSql). */
const toEvent = (row: any): IssuingEvent => {
  const createdAt = toIso(row.created_at)
  return {
    id: row.id,
    object: "event",
    type: row.type as EventType,
    program_id: row.program_id,
    tags: fromJson<Array<string>>(row.tags),
    created_at: createdAt,
    data: { object: eventObject(row.data, row.program_id, createdAt) }
  }
}

/** The event port over SqlClient, one SQL text for both dialects. */
export const SqlEventStoreLive = Layer.effect(
  EventStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const columns = `issuing_events.*, ${sql.onDialectOrElse({
      pg: () => eventTagsSql("pg", "issuing_events.id"),
      orElse: () => eventTagsSql("sqlite", "issuing_events.id")
    })} AS tags`
    const appendAll = (events: ReadonlyArray<IssuingEvent>) =>
      events.length === 0 ? Effect.void : sql`INSERT INTO issuing_events ${sql.insert(events.map(eventRow))}`.pipe(Effect.asVoid)
    const where = (programId: string, type: string | undefined) =>
      type === undefined ? sql`program_id = ${programId}` : sql`program_id = ${programId} AND type = ${type}`
    return {
      append: (event) => appendAll([event]),
      appendAll,
      find: (programId, eventId) =>
        sql`SELECT ${sql.literal(columns)} FROM issuing_events WHERE id = ${eventId} AND program_id = ${programId}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toEvent))
        ),
      list: (programId, filter, window) => {
        // A time filter bounds the range of the program's (or its type's) index the page reads.
        const all = where(programId, filter.type)
        const range = sql.and([all, ...createdConditions(sql, filter.created)])
        const counted =
          filter.type !== undefined ? maintained("events", programId, { type: filter.type }) : maintainedEvery("events", programId)
        return Effect.all({
          rows: pageRows(sql, window, EVENT_ORDER_FIELDS, {
            select: sql.literal(columns),
            from: sql.literal("issuing_events"),
            where: range
          }).pipe(Effect.map((rows) => rows.map(toEvent))),
          total: listTotal(sql, filter.created !== undefined ? inWindow("issuing_events", counted, [all], filter.created) : counted)
        })
      }
    }
  })
)
