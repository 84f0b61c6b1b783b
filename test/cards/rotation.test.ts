import { Cards } from "@issuing/core"
import { Effect, Schema } from "effect"
import * as crypto from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "../support/cli.js"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { servePlatform } from "../support/platform.js"

const OLD_KEY = crypto.randomBytes(32)
const NEW_KEY = crypto.randomBytes(32)
const keyId = (key: Buffer) => crypto.createHash("sha256").update(key).digest("hex").slice(0, 8)

const storedKeyIds = async (database: TestDatabase): Promise<Array<string>> => {
  if (database.kind === "sqlite") {
    const { default: Database } = await import("better-sqlite3")
    const db = new Database(database.filename!, { readonly: true })
    try {
      return (db.prepare("SELECT vault_key_id FROM issuing_cards ORDER BY id").all() as Array<{ vault_key_id: string }>).map(
        (row) => row.vault_key_id
      )
    } finally {
      db.close()
    }
  }
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    return (await client.query("SELECT vault_key_id FROM issuing_cards ORDER BY id")).rows.map((row) => row.vault_key_id)
  } finally {
    await client.end()
  }
}

describe.each(STORE_KINDS)("vault key rotation on %s", (kind) => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
  })
  afterAll(async () => {
    await database?.drop()
  })

  it("keeps old cards readable and searchable under new,old, re-seals them, then works with the new key alone", async () => {
    const first = await servePlatform(database, [OLD_KEY])
    const org = await first.instance.runtime.runPromise(
      Effect.flatMap((await import("@issuing/core")).Access, (access) => access.createOrganization("Rotation"))
    )
    const call = async (baseUrl: string, method: string, route: string, body?: unknown, idempotencyKey?: string) => {
      const response = await fetch(`${baseUrl}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${org.api_key}`,
          "x-program-id": org.program_id,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
        },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
      return { status: response.status, replayed: response.headers.get("idempotent-replayed"), body: (await response.json()) as any }
    }
    // A response stored under the old key (its fingerprint and its sealed body).
    const idempotencyKey = crypto.randomUUID()
    const walletRequest = { holder: { name: "Rotation" } }
    const wallet = (await call(first.baseUrl, "POST", "/v1/wallets", walletRequest, idempotencyKey)).body
    const card = (await call(first.baseUrl, "POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })).body
    const secrets = (await call(first.baseUrl, "POST", `/v1/cards/${card.id}/reveal`)).body
    await first.close()
    expect(await storedKeyIds(database)).toEqual([keyId(OLD_KEY)])

    // Rotated: ISSUING_VAULT_KEY=new,old.
    const rotated = await servePlatform(database, [NEW_KEY, OLD_KEY])
    expect((await call(rotated.baseUrl, "POST", `/v1/cards/${card.id}/reveal`)).body).toEqual(secrets)
    // A retry across the rotation is the same request: the stored response, not a 409.
    const retried = await call(rotated.baseUrl, "POST", "/v1/wallets", walletRequest, idempotencyKey)
    expect(retried).toMatchObject({ status: 200, replayed: "true", body: wallet })
    expect((await call(rotated.baseUrl, "POST", "/v1/wallets", { holder: { name: "Other" } }, idempotencyKey)).status).toBe(409)
    expect((await call(rotated.baseUrl, "POST", "/v1/cards/search-by-pan", { pan: secrets.pan })).body.id).toBe(card.id)
    const fresh = (await call(rotated.baseUrl, "POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })).body
    expect((await storedKeyIds(database)).sort()).toEqual([keyId(NEW_KEY), keyId(OLD_KEY)].sort())
    const resealed = await rotated.instance.runtime.runPromise(Effect.flatMap(Cards, (cards) => cards.resealWithCurrentKey))
    expect(resealed).toBe(1)
    expect(await rotated.instance.runtime.runPromise(Effect.flatMap(Cards, (cards) => cards.resealWithCurrentKey))).toBe(0)
    await rotated.close()
    expect(await storedKeyIds(database)).toEqual([keyId(NEW_KEY), keyId(NEW_KEY)])

    // The old key is gone: everything still works.
    const after = await servePlatform(database, [NEW_KEY])
    expect((await call(after.baseUrl, "POST", `/v1/cards/${card.id}/reveal`)).body).toEqual(secrets)
    expect((await call(after.baseUrl, "POST", "/v1/cards/search-by-pan", { pan: secrets.pan })).body.id).toBe(card.id)
    expect((await call(after.baseUrl, "POST", `/v1/cards/${fresh.id}/reveal`)).status).toBe(200)
    // The old key was removed within the idempotency retention (against operations.md): the stored
    // response cannot be read, and is not re-run either — a 409 naming the key, never a 500.
    const unreadable = await call(after.baseUrl, "POST", "/v1/wallets", walletRequest, idempotencyKey)
    expect(unreadable.status).toBe(409)
    expect(unreadable.body.error).toMatchObject({ code: "conflict", param: "Idempotency-Key" })
    await after.close()
  })
})

describe.each(STORE_KINDS)("a vault key missing from the configuration on %s", (kind) => {
  it("refuses to start, naming the key and what to add, and starts once the key is back", async () => {
    const database = await createTestDatabase(kind, { migrated: true })
    try {
      const first = await servePlatform(database, [OLD_KEY])
      const org = await first.instance.runtime.runPromise(
        Effect.flatMap((await import("@issuing/core")).Access, (access) => access.createOrganization("Missing key"))
      )
      const headers = { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id, "content-type": "application/json" }
      const wallet = (await (
        await fetch(`${first.baseUrl}/v1/wallets`, { method: "POST", headers, body: JSON.stringify({ holder: { name: "Key" } }) })
      ).json()) as { id: string }
      const issued = await fetch(`${first.baseUrl}/v1/cards`, {
        method: "POST",
        headers,
        body: JSON.stringify({ wallet_id: wallet.id, type: "VIRTUAL" })
      })
      expect(issued.status).toBe(200)
      await first.close()

      // Started with the new key alone (the old one dropped before `issuing vault reseal`).
      const refused = await servePlatform(database, [NEW_KEY]).then(
        () => undefined,
        (error: Error) => error
      )
      expect(refused?.message).toContain(`vault key ${keyId(OLD_KEY)}`)
      expect(refused?.message).toContain("ISSUING_VAULT_KEY does not hold")
      expect(refused?.message).toContain("issuing vault reseal")

      // With the key added back after the current one, it starts and reveals.
      const back = await servePlatform(database, [NEW_KEY, OLD_KEY])
      const card = (await issued.json()) as { id: string }
      expect((await fetch(`${back.baseUrl}/v1/cards/${card.id}/reveal`, { method: "POST", headers })).status).toBe(200)
      await back.close()
    } finally {
      await database.drop()
    }
  })

  it.runIf(kind === "sqlite")("issuing serve exits 1 with the same advice", async () => {
    const database = await createTestDatabase(kind, { migrated: true })
    try {
      const first = await servePlatform(database, [OLD_KEY])
      await first.instance.runtime.runPromise(
        Effect.gen(function* () {
          const core = yield* Effect.promise(() => import("@issuing/core"))
          const org = yield* Effect.flatMap(core.Access, (access) => access.createOrganization("CLI key"))
          const access = yield* core.Access
          const caller = yield* access.resolveProgram(yield* access.authenticate(`Bearer ${org.api_key}`), org.program_id)
          const wallet = yield* Effect.flatMap(core.Ledger, (ledger) => ledger.createWallet(org.program_id, { holder: { name: "CLI" } }))
          const input = yield* Schema.decodeUnknown(core.IssueCard)({ wallet_id: wallet.id, type: "VIRTUAL" })
          yield* Effect.flatMap(Cards, (cards) => cards.issue(caller, input))
        })
      )
      await first.close()
      const result = await runCli(["serve"], {
        ISSUING_DATABASE_URL: database.url,
        ISSUING_PORT: "0",
        ISSUING_VAULT_KEY: NEW_KEY.toString("base64")
      })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(`vault key ${keyId(OLD_KEY)}, which ISSUING_VAULT_KEY does not hold`)
    } finally {
      await database.drop()
    }
  })
})

describe("issuing cards reseal (alias of issuing vault reseal)", () => {
  it("re-seals through the CLI", async () => {
    const database = await createTestDatabase("sqlite", { migrated: true })
    try {
      const old = await servePlatform(database, [OLD_KEY])
      await old.instance.runtime.runPromise(
        Effect.gen(function* () {
          const core = yield* Effect.promise(() => import("@issuing/core"))
          const org = yield* Effect.flatMap(core.Access, (access) => access.createOrganization("CLI"))
          const access = yield* core.Access
          const caller = yield* access.resolveProgram(yield* access.authenticate(`Bearer ${org.api_key}`), org.program_id)
          const wallet = yield* Effect.flatMap(core.Ledger, (ledger) => ledger.createWallet(org.program_id, { holder: { name: "CLI" } }))
          // The service takes a decoded request, as the API hands it over.
          const input = yield* Schema.decodeUnknown(core.IssueCard)({ wallet_id: wallet.id, type: "PHYSICAL" })
          yield* Effect.flatMap(Cards, (cards) => cards.issue(caller, input))
        })
      )
      await old.close()
      const env = { ISSUING_DATABASE_URL: database.url, ISSUING_VAULT_KEY: `${NEW_KEY.toString("base64")},${OLD_KEY.toString("base64")}` }
      const result = await runCli(["cards", "reseal"], env)
      expect(result.stderr).toBe("")
      expect(result.stdout).toContain("re-sealed 1 card under the current vault key")
      // `cards reseal` is an alias of `vault reseal`: webhook secrets are re-sealed too (none here).
      expect(result.stdout).toContain("re-sealed 0 webhook subscription secrets under the current vault key")
      expect(await storedKeyIds(database)).toEqual([keyId(NEW_KEY)])
      expect(result.code).toBe(0)
      expect((await runCli(["cards", "rotate"], env)).code).toBe(64)
      expect((await runCli(["vault", "rotate"], env)).code).toBe(64)
    } finally {
      await database.drop()
    }
  })
})
