import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { StoreLayer } from "./App.js"
import type { DatabaseTarget } from "./config.js"

/**
 * The package that holds each kind of store. @issuing/http only peer-depends on them (optional), so
 * a host app installs the one it runs on and the other's database driver is never pulled in.
 */
export const STORE_PACKAGES = { sqlite: "@issuing/store-sqlite", postgres: "@issuing/store-pg" } as const

/** The store package a database target needs is not installed. */
export class StorePackageMissing extends Error {
  readonly _tag = "StorePackageMissing"
  readonly packageName: string
  constructor(
    readonly kind: DatabaseTarget["kind"],
    options?: ErrorOptions
  ) {
    const packageName = STORE_PACKAGES[kind]
    super(
      `a ${kind === "sqlite" ? "SQLite (sqlite:…)" : "PostgreSQL (postgres://…)"} database needs ${packageName}, which is not installed: npm install ${packageName}`,
      options
    )
    this.packageName = packageName
  }
}

/** A store package, loaded for one database target. */
export interface LoadedStore {
  /** The full store for `createIssuing` (it migrates on start). */
  readonly layer: StoreLayer
  /** Applies pending migrations and nothing else (`issuing migrate`); the applied ids and names. */
  readonly migrate: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, unknown>
}

// Node names the package it cannot find in quotes ("Cannot find package '@issuing/store-pg' imported
// from …"). Anything else, such as the store's own driver missing (its path then names the store
// package, unquoted) or a native binary that fails to load, is a different problem and keeps its
// own message.
const isMissing = (error: unknown, packageName: string) =>
  typeof error === "object" &&
  error !== null &&
  ((error as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND" || (error as { code?: unknown }).code === "MODULE_NOT_FOUND") &&
  String((error as { message?: unknown }).message).includes(`'${packageName}'`)

const importStore = async <A>(kind: DatabaseTarget["kind"], load: () => Promise<A>): Promise<A> => {
  try {
    return await load()
  } catch (error) {
    if (isMissing(error, STORE_PACKAGES[kind])) throw new StorePackageMissing(kind, { cause: error })
    throw error
  }
}

/**
 * Loads the store package the target's scheme names (sqlite: → @issuing/store-sqlite, postgres:// →
 * @issuing/store-pg) with a dynamic import, so only that package has to be installed. Rejects with
 * `StorePackageMissing` when it is not. Creates the SQLite file's folder when needed.
 */
export const loadStore = async (database: DatabaseTarget): Promise<LoadedStore> => {
  if (database.kind === "postgres") {
    const PgStore = await importStore("postgres", () => import("@issuing/store-pg"))
    return {
      layer: PgStore.layer({ url: database.url, listenUrl: database.listenUrl, notify: database.notify }),
      migrate: Effect.provide(PgStore.migrate, PgStore.clientLayer({ url: database.url, maxConnections: 1 }))
    }
  }
  const SqliteStore = await importStore("sqlite", () => import("@issuing/store-sqlite"))
  if (database.filename !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(database.filename)), { recursive: true })
  return {
    layer: SqliteStore.layer({ filename: database.filename }),
    migrate: Effect.provide(SqliteStore.migrate, SqliteStore.SqliteClient.layer({ filename: database.filename }))
  }
}

/**
 * The store layer for a database target. Its package is loaded when the layer is built, so a
 * missing package fails `createIssuing` with `StorePackageMissing`.
 */
export const storeFor = (database: DatabaseTarget): StoreLayer =>
  Layer.unwrapEffect(
    Effect.tryPromise({ try: () => loadStore(database), catch: (error) => error }).pipe(Effect.map((store) => store.layer))
  )

/**
 * What start-up says about how a PostgreSQL target is reached: through a pooler, where the change
 * feed listens, or that LISTEN/NOTIFY is off (docs/operations.md#pgbouncer). Nothing on SQLite,
 * nor when the check cannot connect (start-up then fails with its own message).
 */
export const connectionNotes = async (database: DatabaseTarget): Promise<ReadonlyArray<string>> => {
  if (database.kind !== "postgres") return []
  if (database.notify === false) {
    return ["ISSUING_PG_NOTIFY=off: no LISTEN/NOTIFY; caches revalidated against the change version row, webhook queue polled every 250 ms"]
  }
  const PgStore = await importStore("postgres", () => import("@issuing/store-pg"))
  const pooled = await PgStore.throughPooler(database.url).catch(() => false)
  const deaf =
    "if it pools by transaction the feed hears nothing and caches are revalidated against the version row; set ISSUING_DATABASE_LISTEN_URL to a direct URL"
  if (database.listenUrl === undefined) {
    return pooled ? [`ISSUING_DATABASE_URL goes through a connection pooler and the change feed listens through one too: ${deaf}`] : []
  }
  const where = describeDatabase({ kind: "postgres", url: database.listenUrl })
  const listenPooled = await PgStore.throughPooler(database.listenUrl).then(
    (through) => through,
    () => undefined
  )
  if (listenPooled === undefined) {
    return [
      `the change feed cannot connect to ISSUING_DATABASE_LISTEN_URL (${where}): caches are revalidated against the version row until it can`
    ]
  }
  if (listenPooled) return [`the change feed listens through a connection pooler (ISSUING_DATABASE_LISTEN_URL, ${where}): ${deaf}`]
  return pooled
    ? [`ISSUING_DATABASE_URL goes through a connection pooler; the change feed listens on ISSUING_DATABASE_LISTEN_URL (${where})`]
    : []
}

/** A printable name of the target, without credentials. */
export const describeDatabase = (database: DatabaseTarget): string => {
  if (database.kind === "sqlite") return `sqlite:${database.filename}`
  const url = new URL(database.url)
  return `postgres://${url.host}${url.pathname}`
}
