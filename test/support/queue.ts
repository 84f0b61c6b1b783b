import Database from "better-sqlite3"
import pg from "pg"
import type { TestDatabase } from "./databases.js"

/** Which queued webhook deliveries to count. */
export interface QueueFilter {
  readonly eventId?: string | undefined
  readonly subscriptionId?: string | undefined
}

/**
 * How many webhook deliveries the queue holds for the filter, read on a connection of the test's
 * own. A delivery is queued by the fan-out (in the transaction of its event, docs/webhooks.md) and
 * leaves the queue only when its last try is recorded: a count of 0 read after the event committed
 * means nothing more will ever be sent for it — the positive signal tests wait for instead of
 * sleeping before they assert that something was not sent.
 */
export const queuedDeliveries = async (database: TestDatabase, filter: QueueFilter = {}): Promise<number> => {
  const conditions: Array<string> = []
  const params: Array<string> = []
  for (const [column, value] of [
    ["event_id", filter.eventId],
    ["subscription_id", filter.subscriptionId]
  ] as const) {
    if (value === undefined) continue
    params.push(value)
    conditions.push(database.kind === "sqlite" ? `${column} = ?` : `${column} = $${params.length}`)
  }
  const query = `SELECT COUNT(*) AS n FROM issuing_webhook_deliveries${conditions.length === 0 ? "" : ` WHERE ${conditions.join(" AND ")}`}`
  if (database.kind === "sqlite") {
    const db = new Database(database.filename!, { readonly: true, fileMustExist: true })
    try {
      return Number((db.prepare(query).get(...params) as { n: number }).n)
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    return Number((await client.query(query, params)).rows[0].n)
  } finally {
    await client.end()
  }
}

/**
 * Waits until the queue holds no delivery for the filter (every try of it recorded, or none ever
 * queued). A read that fails (the database is briefly away in the fault suites) is tried again.
 */
export const queueDrained = async (database: TestDatabase, filter: QueueFilter = {}, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  let last: unknown = "never read"
  for (;;) {
    try {
      last = await queuedDeliveries(database, filter)
      if (last === 0) return
    } catch (error) {
      last = error
    }
    if (Date.now() > deadline) throw new Error(`The webhook queue still holds deliveries for ${JSON.stringify(filter)}: ${String(last)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
