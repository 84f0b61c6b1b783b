import { Access, runDeliveryWorker, Webhooks } from "@issuing/core"
import { Effect, Fiber } from "effect"
import * as crypto from "node:crypto"
import pg from "pg"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "../support/cli.js"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { servePlatform } from "../support/platform.js"
import { type Receiver, startReceiver } from "./receiver.js"

const OLD_KEY = crypto.randomBytes(32)
const NEW_KEY = crypto.randomBytes(32)
const keyId = (key: Buffer) => crypto.createHash("sha256").update(key).digest("hex").slice(0, 8)

/** The platform over an existing database with the given vault keys (webhook tries time out in 2 s). */
const serve = (database: TestDatabase, vaultKeys: ReadonlyArray<Buffer>) => servePlatform(database, vaultKeys, { webhookTimeoutMs: 2000 })

/** Runs one statement straight on the database (outside the platform). */
const query = async (database: TestDatabase, text: string): Promise<Array<any>> => {
  if (database.kind === "sqlite") {
    const { default: Database } = await import("better-sqlite3")
    const db = new Database(database.filename!)
    try {
      const statement = db.prepare(text)
      if (!statement.reader) statement.run()
      return statement.reader ? statement.all() : []
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}

const sealedKeyIds = async (database: TestDatabase) =>
  (await query(database, "SELECT id, secret_sealed, previous_secret_sealed FROM issuing_webhook_subscriptions ORDER BY id")).map((row) => ({
    id: row.id as string,
    secret: (row.secret_sealed as string).split(".")[1],
    previous: row.previous_secret_sealed === null ? null : (row.previous_secret_sealed as string).split(".")[1]
  }))

describe.each(STORE_KINDS)("vault key rotation of webhook secrets on %s", (kind) => {
  let database: TestDatabase
  const receivers: Array<Receiver> = []
  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
    for (let i = 0; i < 3; i++) receivers.push(await startReceiver())
  })
  afterAll(async () => {
    for (const receiver of receivers) await receiver.close()
    await database?.drop()
  })

  it("old key → new,old → `issuing vault reseal` → new key alone: older subscriptions still sign verifiably", async () => {
    const [plainReceiver, rotatedReceiver, expiredReceiver] = receivers as [Receiver, Receiver, Receiver]
    const first = await serve(database, [OLD_KEY])
    const org = await first.instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("Rotation")))
    const call = async (baseUrl: string, method: string, route: string, body?: unknown) => {
      const response = await fetch(`${baseUrl}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${org.api_key}`,
          "x-program-id": org.program_id,
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
      return { status: response.status, body: (await response.json()) as any }
    }
    const subscribe = async (receiver: Receiver) => {
      const created = await call(first.baseUrl, "POST", "/v1/webhook-subscriptions", { url: receiver.url, event_types: ["wallet.created"] })
      expect(created.status).toBe(200)
      return created.body as { id: string; secret: string }
    }
    // Three subscriptions sealed under the old key: one plain, one rotated (its previous secret
    // still signs), one rotated long ago (its previous secret expired: dropped, not re-sealed).
    const plain = await subscribe(plainReceiver)
    const rotated = await subscribe(rotatedReceiver)
    const rotatedNew = (await call(first.baseUrl, "POST", `/v1/webhook-subscriptions/${rotated.id}/rotate-secret`)).body as {
      secret: string
    }
    const expired = await subscribe(expiredReceiver)
    const expiredNew = (await call(first.baseUrl, "POST", `/v1/webhook-subscriptions/${expired.id}/rotate-secret`)).body as {
      secret: string
    }
    const wallet = (await call(first.baseUrl, "POST", "/v1/wallets", { holder: { name: "Rotation" } })).body
    expect((await call(first.baseUrl, "POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })).status).toBe(200)
    await first.close()
    await query(
      database,
      `UPDATE issuing_webhook_subscriptions SET previous_secret_expires_at = '2000-01-01T00:00:00.000Z' WHERE id = '${expired.id}'`
    )
    expect(new Set((await sealedKeyIds(database)).flatMap((row) => [row.secret, row.previous]).filter((id) => id !== null))).toEqual(
      new Set([keyId(OLD_KEY)])
    )

    // ISSUING_VAULT_KEY=new,old, then `issuing vault reseal`.
    const env = { ISSUING_DATABASE_URL: database.url, ISSUING_VAULT_KEY: `${NEW_KEY.toString("base64")},${OLD_KEY.toString("base64")}` }
    const result = await runCli(["vault", "reseal"], env)
    expect(result.stderr).toBe("")
    expect(result.stdout).toContain("re-sealed 1 card under the current vault key")
    expect(result.stdout).toContain("re-sealed 3 webhook subscription secrets under the current vault key")
    expect(result.code).toBe(0)
    expect(await sealedKeyIds(database)).toEqual(
      [
        { id: plain.id, secret: keyId(NEW_KEY), previous: null },
        { id: rotated.id, secret: keyId(NEW_KEY), previous: keyId(NEW_KEY) },
        { id: expired.id, secret: keyId(NEW_KEY), previous: null }
      ].sort((a, b) => a.id.localeCompare(b.id))
    )

    // The old key is dropped: deliveries to the older subscriptions still verify.
    const after = await serve(database, [NEW_KEY])
    const worker = after.instance.runtime.runFork(runDeliveryWorker({ pollIntervalMs: 50 }))
    try {
      expect(await after.instance.runtime.runPromise(Effect.flatMap(Webhooks, (webhooks) => webhooks.resealWithCurrentKey))).toBe(0)
      const emitted = await call(after.baseUrl, "POST", "/v1/wallets", { holder: { name: "After" } })
      expect(emitted.status).toBe(200)
      const deliveryTo = async (receiver: Receiver) => {
        const isIt = (r: { body: string }) => JSON.parse(r.body).data.object.id === emitted.body.id
        await receiver.waitFor((all) => all.some(isIt))
        return receiver.received.find(isIt)!
      }
      const toPlain = await deliveryTo(plainReceiver)
      expect(new Webhook(plain.secret).verify(toPlain.body, toPlain.headers)).toMatchObject({ type: "wallet.created" })
      const toRotated = await deliveryTo(rotatedReceiver)
      expect(toRotated.headers["webhook-signature"]!.split(" ")).toHaveLength(2)
      new Webhook(rotatedNew.secret).verify(toRotated.body, toRotated.headers)
      new Webhook(rotated.secret).verify(toRotated.body, toRotated.headers) // the previous secret, within its 24 h
      const toExpired = await deliveryTo(expiredReceiver)
      expect(toExpired.headers["webhook-signature"]!.split(" ")).toHaveLength(1)
      new Webhook(expiredNew.secret).verify(toExpired.body, toExpired.headers)
      expect(() => new Webhook(expired.secret).verify(toExpired.body, toExpired.headers)).toThrow()
    } finally {
      await after.instance.runtime.runPromise(Fiber.interrupt(worker))
      await after.close()
    }
  }, 120_000)
})
