import * as PgStore from "@issuing/store-pg"
import * as SqliteStore from "@issuing/store-sqlite"
import * as fs from "node:fs"
import * as path from "node:path"
import type { StoreLayer } from "./App.js"
import type { DatabaseTarget } from "./config.js"

/** The store layer for a database target (creating the SQLite file's folder when needed). */
export const storeFor = (database: DatabaseTarget): StoreLayer => {
  if (database.kind === "postgres") return PgStore.layer({ url: database.url })
  if (database.filename !== ":memory:") fs.mkdirSync(path.dirname(path.resolve(database.filename)), { recursive: true })
  return SqliteStore.layer({ filename: database.filename })
}

/** A printable name of the target, without credentials. */
export const describeDatabase = (database: DatabaseTarget): string => {
  if (database.kind === "sqlite") return `sqlite:${database.filename}`
  const url = new URL(database.url)
  return `postgres://${url.host}${url.pathname}`
}
