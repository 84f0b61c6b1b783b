import { Statement } from "@effect/sql"
import type Database from "better-sqlite3"
import { Effect } from "effect"

/** A statement as the store ran it: its SQL text and parameters. */
export type Compiled = readonly [text: string, params: ReadonlyArray<unknown>]

/**
 * Runs `effect` recording every SQL statement it compiles into `into`, so a test can check the
 * plans of the statements a store really runs (docs/operations.md#volume).
 */
export const recording = <A, E, R>(effect: Effect.Effect<A, E, R>, into: Array<Compiled>): Effect.Effect<A, E, R> =>
  effect.pipe(
    Statement.withTransformer((statement) =>
      Effect.sync(() => {
        into.push(statement.compile())
        return statement
      })
    )
  )

/** SQLite's query plan of a recorded statement, its rows' details joined with " | ". */
export const sqlitePlan = (db: Database.Database, [text, params]: Compiled): string =>
  (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...(params as Array<any>)) as Array<{ detail: string }>)
    .map((row) => row.detail)
    .join(" | ")
