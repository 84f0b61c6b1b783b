import { Events, type EventType } from "@issuing/core"
import { Effect } from "effect"
import pg from "pg"
import Sqlite from "better-sqlite3"
import { expect } from "vitest"
import type { TestPlatform } from "../support/platform.js"

/** Creates an API key through the API with the organization's admin key; returns the created key (with secret). */
export const createKey = async (
  platform: TestPlatform,
  fields: { role: "admin" | "developer" | "viewer"; program_ids?: Array<string> | null; pan_reveal?: boolean },
  adminKey = platform.org.api_key
) => {
  const response = await platform.request("POST", "/v1/api-keys", {
    key: adminKey,
    program: null,
    body: { name: `${fields.role} key`, ...fields }
  })
  expect(response.status, response.text).toBe(200)
  return response.body as { id: string; secret: string; program_ids: Array<string> | null }
}

/** Creates a program through the API with the admin key. */
export const createProgram = async (platform: TestPlatform, name: string, adminKey = platform.org.api_key) => {
  const response = await platform.request("POST", "/v1/programs", { key: adminKey, program: null, body: { name } })
  expect(response.status, response.text).toBe(200)
  return response.body as { id: string; name: string; created_at: string }
}

/** Writes an event on a program through the domain service (the API offers no way to create one directly). */
export const emitEvent = (platform: TestPlatform, programId: string, type: EventType = "card.created") =>
  platform.instance.runtime.runPromise(Effect.flatMap(Events, (events) => events.emit(programId, type, { id: "fixture", object: "card" })))

/** Runs statements on the platform's database over a separate connection (to break or inspect it from outside). */
export const onDatabase = async <A>(
  platform: TestPlatform,
  work: (query: (text: string) => Promise<Array<Record<string, unknown>>>) => Promise<A>
): Promise<A> => {
  if (platform.kind === "sqlite") {
    const db = new Sqlite(platform.database.filename!)
    db.pragma("busy_timeout = 5000")
    try {
      return await work(async (text) => {
        const statement = db.prepare(text)
        if (!statement.reader) statement.run()
        return statement.reader ? (statement.all() as Array<Record<string, unknown>>) : []
      })
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: platform.database.url })
  await client.connect()
  try {
    return await work(async (text) => (await client.query(text)).rows)
  } finally {
    await client.end()
  }
}

/** Every row of every issuing_ table, as one JSON text: to prove a secret is stored nowhere in plaintext. */
export const dumpDatabase = (platform: TestPlatform) =>
  onDatabase(platform, async (query) => {
    const tables =
      platform.kind === "sqlite"
        ? await query("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'issuing_%'")
        : await query("SELECT table_name AS name FROM information_schema.tables WHERE table_name LIKE 'issuing_%'")
    const dump: Record<string, unknown> = {}
    for (const { name } of tables) dump[String(name)] = await query(`SELECT * FROM ${String(name)}`)
    return JSON.stringify(dump)
  })
