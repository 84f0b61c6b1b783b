import { canonicalRequest, Idempotency, IdempotencyStore, Vault } from "@issuing/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { dumpDatabase, onDatabase } from "./fixtures.js"

// docs/api.md#idempotency: Idempotency-Key on POST, on both stores.
describe.each(STORE_KINDS)("idempotency keys on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const programNamed = async (name: string, key = platform.org.api_key) => {
    const listed = await platform.request("GET", "/v1/programs?page_size=100", { key })
    return listed.body.data.filter((program: { name: string }) => program.name === name).length as number
  }
  const post = (name: string, idempotencyKey: string | undefined, key = platform.org.api_key) =>
    platform.request("POST", "/v1/programs", { key, program: null, body: { name }, idempotencyKey })

  it("replays the stored response for the same request, with Idempotent-Replayed: true", async () => {
    const key = uuid()
    const first = await post("Replayed", key)
    expect(first.status).toBe(200)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const second = await post("Replayed", key)
    expect(second.status).toBe(200)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.text).toBe(first.text)
    expect(second.headers.get("content-type")).toContain("application/json")
    // A fresh Request-Id for the replay itself.
    expect(second.headers.get("request-id")).not.toBe(first.headers.get("request-id"))
    expect(await programNamed("Replayed")).toBe(1)
    // Upper-case spelling of the same UUID is the same key.
    expect((await post("Replayed", key.toUpperCase())).headers.get("idempotent-replayed")).toBe("true")
  })

  it("answers 409 when the key is reused with a different body or path", async () => {
    const key = uuid()
    expect((await post("Original", key)).status).toBe(200)
    expectEnvelope(await post("Different", key), 409, { type: "conflict_error", code: "conflict", param: "Idempotency-Key" })
    expectEnvelope(
      await platform.request("POST", "/v1/api-keys", { program: null, body: { name: "Original" }, idempotencyKey: key }),
      409,
      { code: "conflict", param: "Idempotency-Key" }
    )
    expect(await programNamed("Different")).toBe(0)
  })

  it("counts the program (X-Program-ID) as part of the request on program-scoped operations", async () => {
    const second = await platform.request("POST", "/v1/programs", { program: null, body: { name: "Second for keys" } })
    const key = uuid()
    const body = { holder: { name: "Idempotent holder" } }
    const first = await platform.request("POST", "/v1/wallets", { body, idempotencyKey: key })
    expect(first.status, first.text).toBe(200)
    expect((await platform.request("POST", "/v1/wallets", { body, idempotencyKey: key })).headers.get("idempotent-replayed")).toBe("true")
    expectEnvelope(await platform.request("POST", "/v1/wallets", { body, idempotencyKey: key, program: second.body.id }), 409, {
      code: "conflict",
      param: "Idempotency-Key"
    })
    // The query string is part of the request too.
    expectEnvelope(await platform.request("POST", "/v1/wallets?x=1", { body, idempotencyKey: key }), 409, { code: "conflict" })
  })

  it("answers 400 (param Idempotency-Key) to a key that is not a UUID, and writes nothing", async () => {
    for (const key of ["abc", "12345", `${uuid()}0`, "not-a-uuid-at-all-not-a-uuid-at-all"]) {
      expectEnvelope(await post("Bad key", key), 400, { code: "invalid_request", param: "Idempotency-Key" })
    }
    expect(await programNamed("Bad key")).toBe(0)
  })

  it("scopes keys per organization", async () => {
    const other = await platform.createOrganization()
    const key = uuid()
    const mine = await post("Scoped", key)
    const theirs = await post("Scoped", key, other.api_key)
    expect(theirs.status).toBe(200)
    expect(theirs.headers.get("idempotent-replayed")).toBeNull()
    expect(theirs.body.id).not.toBe(mine.body.id)
    expect(await programNamed("Scoped", other.api_key)).toBe(1)
  })

  it("replays a stored response only to the API key that made it (another key of the organization gets 409)", async () => {
    const developer = await platform.request("POST", "/v1/api-keys", {
      program: null,
      body: { name: "Replay thief", role: "developer" }
    })
    expect(developer.status).toBe(200)
    const key = uuid()
    const body = { name: "Replayed admin", role: "admin", pan_reveal: true }
    const created = await platform.request("POST", "/v1/api-keys", { program: null, body, idempotencyKey: key })
    expect(created.status).toBe(200)
    // Same organization, same key, same request, another API key: never the stored secret.
    const stolen = await platform.request("POST", "/v1/api-keys", {
      key: developer.body.secret,
      program: null,
      body,
      idempotencyKey: key
    })
    expectEnvelope(stolen, 409, { code: "conflict", param: "Idempotency-Key" })
    expect(stolen.text).not.toContain(created.body.secret)
    // The key that made it still gets its replay.
    const replay = await platform.request("POST", "/v1/api-keys", { program: null, body, idempotencyKey: key })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body.secret).toBe(created.body.secret)
  })

  it("stores 4xx outcomes of the handler and replays them", async () => {
    const key = uuid()
    const first = await platform.request("POST", "/v1/programs", { program: null, body: { name: "" }, idempotencyKey: key })
    expectEnvelope(first, 400, { param: "name" })
    const again = await platform.request("POST", "/v1/programs", { program: null, body: { name: "" }, idempotencyKey: key })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.text).toBe(first.text)
    // The replayed envelope is the stored one, and its Request-Id header agrees with its body.
    expectEnvelope(again, 400, { param: "name" })
    // Fixing the body needs a new key.
    expectEnvelope(await post("Fixed", key), 409, { code: "conflict" })
  })

  it("does not store a 500: the same key then runs the request", async () => {
    const key = uuid()
    await onDatabase(platform, (query) => query("ALTER TABLE issuing_programs RENAME TO issuing_programs_away"))
    try {
      expectEnvelope(await post("After outage", key), 500, { type: "api_error", code: "internal_error" })
    } finally {
      await onDatabase(platform, (query) => query("ALTER TABLE issuing_programs_away RENAME TO issuing_programs"))
    }
    const retried = await post("After outage", key)
    expect(retried.status).toBe(200)
    expect(retried.headers.get("idempotent-replayed")).toBeNull()
    expect((await post("After outage", key)).headers.get("idempotent-replayed")).toBe("true")
    expect(await programNamed("After outage")).toBe(1)
  })

  it("answers 409 while a request with the key is still running", async () => {
    // A request holding the key elsewhere (another process, or a slow one): its claim is in the store.
    const key = uuid()
    const body = JSON.stringify({ name: "Running" })
    // The request as the pipeline fingerprints it: method, path, program (none here), API key id, body.
    const keys = await platform.request("GET", "/v1/api-keys?page_size=100", { program: null })
    const adminKeyId = keys.body.data.find((key: { name: string }) => key.name === "Admin key").id as string
    const fingerprint = await platform.instance.runtime.runPromise(
      Effect.map(Vault, (vault) => vault.fingerprint(canonicalRequest(["POST", "/v1/programs", "", adminKeyId, body])))
    )
    const claim = await platform.instance.runtime.runPromise(
      Effect.flatMap(IdempotencyStore, (store) =>
        store.claim({
          organizationId: platform.org.organization_id,
          key,
          fingerprint,
          olderFingerprints: [],
          now: new Date().toISOString(),
          token: "a-request-elsewhere",
          staleBefore: new Date(Date.now() - 60_000).toISOString(),
          expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
          expiredBefore: new Date(Date.now() - 86_400_000).toISOString()
        })
      )
    )
    expect(claim._tag).toBe("Claimed")
    const running = await platform.request("POST", "/v1/programs", {
      program: null,
      rawBody: body,
      headers: { "content-type": "application/json" },
      idempotencyKey: key
    })
    expectEnvelope(running, 409, { code: "conflict", param: "Idempotency-Key" })
    expect(running.body.error.message).toMatch(/still being processed/)
    expect(await programNamed("Running")).toBe(0)
  })

  it("runs one of many concurrent identical requests; the others get the replay or 409", async () => {
    const key = uuid()
    const responses = await Promise.all(Array.from({ length: 8 }, () => post("Concurrent", key)))
    const executed = responses.filter((response) => response.status === 200 && response.headers.get("idempotent-replayed") === null)
    expect(executed).toHaveLength(1)
    for (const response of responses) {
      if (response === executed[0]) continue
      if (response.status === 200) {
        expect(response.headers.get("idempotent-replayed")).toBe("true")
        expect(response.text).toBe(executed[0]!.text)
      } else {
        expectEnvelope(response, 409, { code: "conflict", param: "Idempotency-Key" })
      }
    }
    expect(await programNamed("Concurrent")).toBe(1)
  })

  it.runIf(kind === "postgres")("holds the key while the first request waits on a lock: the second gets 409", async () => {
    const key = uuid()
    const locker = new pg.Client({ connectionString: platform.database.url })
    await locker.connect()
    try {
      await locker.query("BEGIN")
      await locker.query("LOCK TABLE issuing_programs IN EXCLUSIVE MODE")
      const lockerPid = (await locker.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number
      const first = post("Locked", key)
      // The first request has claimed the key and now waits on the lock: seen waiting for the locker.
      for (const deadline = Date.now() + 20_000; ; ) {
        const { rows } = await locker.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND $1 = ANY(pg_blocking_pids(pid))",
          [lockerPid]
        )
        if (rows[0].n > 0) break
        if (Date.now() > deadline) throw new Error("the first request never waited for the lock")
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expectEnvelope(await post("Locked", key), 409, { code: "conflict", param: "Idempotency-Key" })
      await locker.query("COMMIT")
      expect((await first).status).toBe(200)
    } finally {
      await locker.end()
    }
    expect((await post("Locked", key)).headers.get("idempotent-replayed")).toBe("true")
  })

  it("does not store failures before the handler (authentication) under the key", async () => {
    const key = uuid()
    expectEnvelope(await post("Auth first", key, `sk_sandbox_${"z".repeat(32)}`), 401, { code: "authentication_error" })
    const real = await post("Auth first", key)
    expect(real.status).toBe(200)
    expect(real.headers.get("idempotent-replayed")).toBeNull()
  })

  it("keeps a stored response that carries a secret encrypted, and replays the secret", async () => {
    const key = uuid()
    const created = await platform.request("POST", "/v1/api-keys", {
      program: null,
      body: { name: "Idempotent key", role: "developer" },
      idempotencyKey: key
    })
    expect(created.status).toBe(200)
    const secret = created.body.secret as string
    expect(secret).toMatch(/^sk_sandbox_/)
    const replay = await platform.request("POST", "/v1/api-keys", {
      program: null,
      body: { name: "Idempotent key", role: "developer" },
      idempotencyKey: key
    })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body.secret).toBe(secret)

    const dump = await dumpDatabase(platform)
    expect(dump).toContain(created.body.id)
    expect(dump).not.toContain(secret)
    expect(dump).not.toContain(secret.slice("sk_sandbox_".length))
    const stored = await onDatabase(platform, (query) =>
      query(`SELECT response_body FROM issuing_idempotency_keys WHERE idempotency_key = '${key}'`)
    )
    expect(String(stored[0]!.response_body)).toMatch(/^v1\.[0-9a-f]{8}\./)
    if (platform.kind === "sqlite") {
      for (const file of [platform.database.filename!, `${platform.database.filename!}-wal`]) {
        if (fs.existsSync(file)) expect(fs.readFileSync(file).includes(secret)).toBe(false)
      }
    }
  })

  it("purges keys past the 24 h retention", async () => {
    const key = uuid()
    expect((await post("Purged", key)).status).toBe(200)
    const stamp = (hoursAgo: number) => {
      const at = new Date(Date.now() - hoursAgo * 3_600_000).toISOString()
      return platform.kind === "sqlite" ? `'${at}'` : `'${at}'::timestamptz`
    }
    await onDatabase(platform, (query) =>
      query(`UPDATE issuing_idempotency_keys SET created_at = ${stamp(25)}, expires_at = ${stamp(1)} WHERE idempotency_key = '${key}'`)
    )
    const purged = await platform.instance.runtime.runPromise(Effect.flatMap(Idempotency, (idempotency) => idempotency.purgeExpired))
    expect(purged).toBeGreaterThanOrEqual(1)
    const rerun = await post("Purged", key)
    expect(rerun.status).toBe(200)
    expect(rerun.headers.get("idempotent-replayed")).toBeNull()
    expect(await programNamed("Purged")).toBe(2)
  })
})
