import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"

/** A prepared statement run synchronously (better-sqlite3 shape: positional `?` parameters). */
export interface SyncStatement {
  readonly run: (...params: ReadonlyArray<unknown>) => { readonly changes: number }
  readonly all: (...params: ReadonlyArray<unknown>) => Array<any>
  readonly get: (...params: ReadonlyArray<unknown>) => any
}

/** The connection as a synchronous callback sees it. */
export interface SyncConnection {
  /** A prepared statement for `sql`, cached by the client (prepare each text once). */
  readonly prepare: (sql: string) => SyncStatement
}

/**
 * Synchronous access to the store's one in-process connection (SQLite), for a hot write that
 * would otherwise pay the Effect statement overhead once per statement: the whole write runs as
 * ONE synchronous call of prepared statements on the SAME connection and in the SAME transaction
 * as the caller's SqlClient work (never a second connection).
 *
 * `run(f)` is all-or-nothing on its own: inside the caller's transaction (`TransactionConnection`
 * present — the group commit's or an idempotent request's) `f` runs in a savepoint of it; outside
 * any transaction it is its own `BEGIN IMMEDIATE` transaction once the connection is free. If `f`
 * throws, everything it wrote is rolled back and the effect fails with a SqlError (retryable codes
 * kept in its cause).
 */
export interface SyncSqlService {
  readonly run: <A>(f: (connection: SyncConnection) => A) => Effect.Effect<A, SqlError.SqlError>
  /**
   * `f` on the connection once it is free, outside any transaction: for reads (each statement
   * sees what was committed when it ran). Not for writes, which `run` makes transactions.
   */
  readonly read: <A>(f: (connection: SyncConnection) => A) => Effect.Effect<A, SqlError.SqlError>
}

/** Synchronous access to the SQLite client's one connection (SqliteClient.ts provides it). */
export class SyncSql extends Context.Tag("@issuing/store-sqlite/SyncSql")<SyncSql, SyncSqlService>() {}
