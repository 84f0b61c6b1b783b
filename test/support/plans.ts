import { SqlClient, Statement } from "@effect/sql"
import type Database from "better-sqlite3"
import { Effect, type ManagedRuntime } from "effect"

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

/**
 * PostgreSQL's plan of a recorded statement (`EXPLAIN (COSTS OFF)`, its lines joined with " | "),
 * planned with sorts, sequential and bitmap scans priced out of reach (`SET LOCAL enable_… = off`,
 * in a transaction of its own): on the few rows of a test's database the planner would read a
 * table whole and sort it, so this asks whether the statement CAN be answered through an index in
 * its order — a plan that still holds a Sort node has no other way.
 */
export const pgPlan = (runtime: ManagedRuntime.ManagedRuntime<any, any>, [text, params]: Compiled): Promise<string> =>
  runtime.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          for (const setting of ["enable_sort", "enable_seqscan", "enable_bitmapscan"]) {
            yield* sql.unsafe(`SET LOCAL ${setting} = off`)
          }
          const rows = yield* sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (COSTS OFF) ${text}`, params as Array<any>)
          return rows.map((row) => row["QUERY PLAN"].trim()).join(" | ")
        })
      )
    })
  )

/** Whether a plan of `pgPlan` sorts rows anywhere (a Sort node; a Merge Append's "Sort Key" is no sort). */
export const pgSorts = (plan: string): boolean => plan.split(" | ").some((line) => /^(->\s+)?(Incremental )?Sort$/.test(line))
