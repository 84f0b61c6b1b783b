import {
  Access,
  type AuthorizationAnswer,
  AuthorizationDecisions,
  AuthorizationEndpoints,
  type AuthorizationRequest,
  type Card,
  ChangeFeed,
  type Decision,
  Transactor
} from "@issuing/core"
import { createIssuing, type IssuingInstance, storeFor } from "@issuing/http"
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Exit, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { type DecisionReceiver as Receiver, startDecisionReceiver as startReceiver } from "../support/decisionReceiver.js"
import { type ServedPlatform, servePlatform, startPlatform, TEST_VAULT_KEY, type TestPlatform } from "../support/platform.js"
import { createWallet, issueCard } from "./helpers.js"

/**
 * Real-time decisions (docs/card-transactions.md#real-time-decisions): `AuthorizationDecisions.decide`
 * against a real receiver in its own process (test/support/decision-receiver.mjs), which verifies
 * every request's Standard Webhooks signature with the stock `standardwebhooks` package; against a
 * host's embedded decider; and across two platform instances on one database.
 */

const decideOn = (instance: IssuingInstance, programId: string, request: AuthorizationRequest): Promise<Decision | null> =>
  instance.runtime
    .runPromise(Effect.flatMap(AuthorizationDecisions, (decisions) => decisions.decide(programId, request)))
    .then(Option.getOrNull)

/** What a request's authentication reads first on every node; then decides there. */
const decideAfterCommittedRead = (instance: IssuingInstance, programId: string, request: AuthorizationRequest) =>
  instance.runtime.runPromise(Effect.flatMap(ChangeFeed, (feed) => feed.committed)).then(() => decideOn(instance, programId, request))

/** Waits until the node follows its change feed (PostgreSQL: the LISTEN connection is up); caches are bypassed before. */
const feedUp = async (instance: IssuingInstance) => {
  for (let tries = 0; tries < 200; tries++) {
    if (Option.isSome(await instance.runtime.runPromise(Effect.flatMap(ChangeFeed, (feed) => feed.version)))) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("the change feed did not come up")
}

const requestFor = (card: Card, amount: number, partial_approval_capable = false): AuthorizationRequest => ({
  transaction: { id: "0193f1f0-0000-7000-8000-000000000001", object: "transaction", card_id: card.id, amount, status: "PENDING" },
  card,
  amount,
  kind: "AUTHORIZATION",
  partial_approval_capable
})

const decision = (approved: boolean, amount: number, reason: string, recorded: number) => ({
  approved,
  amount,
  record: { amount: recorded, approved, reason, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }
})

describe.each(STORE_KINDS)("real-time decisions through an authorization endpoint on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let card: Card
  let endpoint: { id: string; secret: string }
  beforeAll(async () => {
    platform = await startPlatform(kind)
    receiver = await startReceiver()
    const wallet = await createWallet(platform)
    card = await issueCard(platform, wallet.id)
    const created = await platform.request("POST", "/v1/authorization-endpoints", {
      body: { url: receiver.url("/approve"), timeout_ms: 5000 }
    })
    expect(created.status, created.text).toBe(200)
    endpoint = created.body
    await receiver.trust([endpoint.secret])
  })
  afterAll(async () => {
    receiver?.close()
    await platform?.close()
  })

  const configure = async (body: Record<string, unknown>) => {
    const response = await platform.request("PATCH", `/v1/authorization-endpoints/${endpoint.id}`, { body })
    expect(response.status, response.text).toBe(200)
  }

  /** Points the endpoint at `mode`, decides once, and returns the decision and what the receiver got. */
  const ask = async (mode: string, request: AuthorizationRequest, settings: Record<string, unknown> = {}) => {
    await configure({ url: receiver.url(mode), timeout_ms: 5000, timeout_decision: "DECLINE", ...settings })
    const before = (await receiver.log()).length
    const decided = await decideOn(platform.instance, platform.org.program_id, request)
    const received = (await receiver.log()).slice(before)
    return { decided, received }
  }

  it.each([
    ["/approve", 100, false, decision(true, 100, "webhook_approved", 100)],
    ["/decline", 100, false, decision(false, 0, "webhook_declined", 100)],
    ["/amount/100", 100, false, decision(true, 100, "webhook_approved", 100)],
    ["/amount/40", 100, true, decision(true, 40, "webhook_approved", 40)],
    // A partial approval the request cannot take, more than asked, or nothing at all: declined.
    ["/amount/40", 100, false, decision(false, 0, "webhook_declined", 100)],
    ["/amount/150", 100, true, decision(false, 0, "webhook_declined", 100)],
    ["/amount/0", 100, true, decision(false, 0, "webhook_declined", 100)],
    ["/garbage", 100, false, decision(false, 0, "webhook_error", 100)],
    ["/ill-typed", 100, false, decision(false, 0, "webhook_error", 100)],
    ["/status/500", 100, false, decision(false, 0, "webhook_error", 100)],
    ["/status/302", 100, false, decision(false, 0, "webhook_error", 100)],
    ["/drop", 100, false, decision(false, 0, "webhook_error", 100)],
    ["/big", 100, false, decision(false, 0, "webhook_error", 100)]
  ])("%s for %i (partial capable: %s) → the decision, from one verified signed request", async (mode, amount, capable, expected) => {
    const request = requestFor(card, amount, capable)
    const { decided, received } = await ask(mode, request)
    expect(decided).toEqual(expected)
    expect(received).toHaveLength(1)
    expect(received[0]).toMatchObject({ path: mode, verified: true, signatures: 1 })
    expect(received[0]!.body).toEqual({
      type: "authorization.request",
      data: { object: request.transaction, card, amount, kind: "AUTHORIZATION", partial_approval_capable: capable }
    })
  })

  it("applies timeout_decision to an answer later than timeout_ms (webhook_timeout) and to errors (webhook_error)", async () => {
    const request = requestFor(card, 250)
    const late = await ask("/late/4000", request, { timeout_ms: 300 })
    expect(late.decided).toEqual(decision(false, 0, "webhook_timeout", 250))
    expect(late.received).toMatchObject([{ path: "/late/4000", verified: true }])
    const lateApproved = await ask("/late/4000", request, { timeout_ms: 300, timeout_decision: "APPROVE" })
    expect(lateApproved.decided).toEqual(decision(true, 250, "webhook_timeout", 250))
    expect((await ask("/status/500", request, { timeout_decision: "APPROVE" })).decided).toEqual(decision(true, 250, "webhook_error", 250))
    expect((await ask("/drop", request, { timeout_decision: "APPROVE" })).decided).toEqual(decision(true, 250, "webhook_error", 250))
    // A decline is the receiver's, whatever timeout_decision says.
    expect((await ask("/decline", request, { timeout_decision: "APPROVE" })).decided).toEqual(decision(false, 0, "webhook_declined", 250))
  })

  it("keeps the connection to the receiver alive between decisions", async () => {
    const request = requestFor(card, 100)
    const first = await ask("/approve", request)
    const second = await decideOn(platform.instance, platform.org.program_id, request)
    expect(second).toEqual(decision(true, 100, "webhook_approved", 100))
    const log = await receiver.log()
    expect(log.at(-1)!.port).toBe(first.received[0]!.port)
  })

  it("asks nothing when the endpoint is disabled or deleted, or the program has none", async () => {
    const request = requestFor(card, 100)
    await configure({ url: receiver.url("/approve"), disabled: true })
    const before = (await receiver.log()).length
    expect(await decideOn(platform.instance, platform.org.program_id, request)).toBeNull()
    const other = await platform.createOrganization("no endpoint")
    expect(await decideOn(platform.instance, other.program_id, request)).toBeNull()
    expect((await receiver.log()).length).toBe(before)
    await configure({ disabled: false })
    expect(await decideOn(platform.instance, platform.org.program_id, request)).toEqual(decision(true, 100, "webhook_approved", 100))
  })

  it("signs with the new secret and, for a day, the previous one too after a rotation", async () => {
    const rotated = await platform.request("POST", `/v1/authorization-endpoints/${endpoint.id}/rotate-secret`)
    expect(rotated.status, rotated.text).toBe(200)
    const request = requestFor(card, 100)
    await receiver.trust([endpoint.secret])
    const old = await ask("/approve", request)
    expect(old.received).toMatchObject([{ verified: true, signatures: 2 }])
    await receiver.trust([rotated.body.secret])
    const fresh = await ask("/approve", request)
    expect(fresh.received).toMatchObject([{ verified: true, signatures: 2 }])
    await receiver.trust([`whsec_${Buffer.alloc(32, 1).toString("base64")}`])
    expect((await ask("/approve", request)).received).toMatchObject([{ verified: false }])
    endpoint = { id: endpoint.id, secret: rotated.body.secret }
    await receiver.trust([endpoint.secret])
  })

  it("refuses to wait for a receiver inside a database transaction (a defect, nothing asked)", async () => {
    await configure({ url: receiver.url("/approve") })
    const before = (await receiver.log()).length
    const exit = await platform.instance.runtime.runPromiseExit(
      Effect.flatMap(Transactor, (transactor) =>
        transactor.withTransaction(
          Effect.flatMap(AuthorizationDecisions, (decisions) => decisions.decide(platform.org.program_id, requestFor(card, 100)))
        )
      )
    )
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    expect((await receiver.log()).length).toBe(before)
  })

  it("serves the endpoint from the node's cache while no change is published, and reads it again after one", async () => {
    const request = requestFor(card, 100)
    await configure({ url: receiver.url("/approve") })
    await feedUp(platform.instance)
    expect(await decideAfterCommittedRead(platform.instance, platform.org.program_id, request)).toEqual(
      decision(true, 100, "webhook_approved", 100)
    )
    // Changed behind the platform's back (no change published): the cached endpoint is still used.
    const behindTheBack = receiver.url("/decline")
    await platform.instance.runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE issuing_authorization_endpoints SET url = ${behindTheBack}`)
    )
    expect(await decideOn(platform.instance, platform.org.program_id, request)).toEqual(decision(true, 100, "webhook_approved", 100))
    // Any published change retires it.
    await platform.instance.runtime.runPromise(Effect.flatMap(ChangeFeed, (feed) => feed.publish("authorization_endpoint", endpoint.id)))
    expect(await decideAfterCommittedRead(platform.instance, platform.org.program_id, request)).toEqual(
      decision(false, 0, "webhook_declined", 100)
    )
  })

  describe("a second instance on the same database", () => {
    let second: ServedPlatform
    let guarded: ServedPlatform
    beforeAll(async () => {
      second = await servePlatform(platform.database)
      // Private targets refused: the address guard at connection time, on an endpoint saved elsewhere.
      guarded = await servePlatform(platform.database, [TEST_VAULT_KEY], { webhookAllowPrivateUrls: false })
    })
    afterAll(async () => {
      await second?.close()
      await guarded?.close()
    })

    it("sees each update and deletion made on the first at once", async () => {
      const request = requestFor(card, 100)
      const onSecond = () => decideAfterCommittedRead(second.instance, platform.org.program_id, request)
      await configure({ url: receiver.url("/approve") })
      expect(await onSecond()).toEqual(decision(true, 100, "webhook_approved", 100))
      // Cached on the second instance now; each change made on the first retires it there.
      await configure({ url: receiver.url("/decline") })
      expect(await onSecond()).toEqual(decision(false, 0, "webhook_declined", 100))
      await configure({ url: receiver.url("/amount/40") })
      expect(await onSecond()).toEqual(decision(false, 0, "webhook_declined", 100))
      await configure({ url: receiver.url("/approve"), disabled: true })
      expect(await onSecond()).toBeNull()
      await configure({ disabled: false })
      expect(await onSecond()).toEqual(decision(true, 100, "webhook_approved", 100))
      const deleted = await platform.request("DELETE", `/v1/authorization-endpoints/${endpoint.id}`)
      expect(deleted.status, deleted.text).toBe(200)
      expect(await onSecond()).toBeNull()
      const created = await platform.request("POST", "/v1/authorization-endpoints", {
        body: { url: receiver.url("/decline"), timeout_ms: 5000 }
      })
      expect(created.status, created.text).toBe(200)
      endpoint = created.body
      await receiver.trust([endpoint.secret])
      expect(await onSecond()).toEqual(decision(false, 0, "webhook_declined", 100))
    })

    it("refuses a loopback receiver at connection time where private targets are not allowed", async () => {
      const request = requestFor(card, 100)
      for (const url of [receiver.url("/approve"), receiver.url("/approve").replace("127.0.0.1", "localhost")]) {
        await configure({ url })
        const before = (await receiver.log()).length
        const decided = await decideAfterCommittedRead(guarded.instance, platform.org.program_id, request)
        expect(decided).toEqual(decision(false, 0, "webhook_error", 100))
        expect((await receiver.log()).length).toBe(before)
      }
    })
  })
})

describe.each(STORE_KINDS)("an embedded authorization decider on %s", (kind) => {
  let database: TestDatabase
  let instance: IssuingInstance
  let receiver: Receiver
  let card: Card
  let programId: string
  let answer: (request: AuthorizationRequest) => Promise<AuthorizationAnswer>
  const asked: Array<AuthorizationRequest> = []
  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
    receiver = await startReceiver()
    instance = await createIssuing({
      store: storeFor(kind === "sqlite" ? { kind: "sqlite", filename: database.filename! } : { kind: "postgres", url: database.url }),
      vaultKeys: [TEST_VAULT_KEY],
      background: false,
      log: null,
      authorizationDecider: (request) => {
        asked.push(request)
        return answer(request)
      },
      authorizationDeciderTimeoutMs: 300
    })
    // A stored endpoint too: the host's decider is asked instead.
    const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("embedded")))
    programId = org.program_id
    await instance.runtime.runPromise(
      Effect.flatMap(AuthorizationEndpoints, (endpoints) => endpoints.create(programId, { url: receiver.url("/approve") }))
    )
    card = {
      id: "0193f1f0-0000-7000-8000-0000000000c1",
      object: "card",
      program_id: programId,
      wallet_id: "0193f1f0-0000-7000-8000-0000000000a1",
      financial_account_id: "0193f1f0-0000-7000-8000-0000000000f1",
      type: "VIRTUAL",
      state: "ACTIVE",
      last_four: "4242",
      exp_month: 12,
      exp_year: 2030,
      allowed_mcc_codes: [],
      blocked_mcc_codes: [],
      spending_period: null,
      created_at: "2026-11-25T00:00:00.000Z",
      updated_at: "2026-11-25T00:00:00.000Z"
    } as Card
  })
  afterAll(async () => {
    receiver?.close()
    await instance?.dispose()
    await database?.drop()
  })

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  it.each<[string, (request: AuthorizationRequest) => Promise<AuthorizationAnswer>, boolean, ReturnType<typeof decision>]>([
    ["approve", async () => ({ approved: true }), false, decision(true, 100, "webhook_approved", 100)],
    ["decline", async () => ({ approved: false, decline_reason: "nope" }), false, decision(false, 0, "webhook_declined", 100)],
    ["partial", async () => ({ approved: true, amount: 30 }), true, decision(true, 30, "webhook_approved", 30)],
    ["partial, not capable", async () => ({ approved: true, amount: 30 }), false, decision(false, 0, "webhook_declined", 100)],
    [
      "throw",
      async () => {
        throw new Error("decider down")
      },
      false,
      decision(false, 0, "webhook_error", 100)
    ],
    ["ill-typed", async () => ({ approved: 1 }) as unknown as AuthorizationAnswer, false, decision(false, 0, "webhook_error", 100)],
    [
      "late",
      async () => {
        await sleep(2000)
        return { approved: true }
      },
      false,
      decision(false, 0, "webhook_timeout", 100)
    ]
  ])("%s → the decision, the stored endpoint never asked", async (_, decider, capable, expected) => {
    answer = decider
    const before = (await receiver.log()).length
    asked.length = 0
    const request = requestFor(card, 100, capable)
    expect(await decideOn(instance, programId, request)).toEqual(expected)
    expect(asked).toEqual([request])
    expect((await receiver.log()).length).toBe(before)
  })

  it("refuses bounds outside the documented ranges at start", async () => {
    const start = (options: Record<string, unknown>) =>
      createIssuing({
        store: storeFor({ kind: "sqlite", filename: ":memory:" }),
        vaultKeys: [TEST_VAULT_KEY],
        background: false,
        log: null,
        authorizationDecider: async () => ({ approved: true }),
        ...options
      })
    await expect(start({ authorizationDeciderTimeoutMs: 99 })).rejects.toThrow(/100 to 5000/)
    await expect(start({ authorizationDeciderTimeoutMs: 5001 })).rejects.toThrow(/100 to 5000/)
    await expect(start({ authorizationDeciderTimeoutDecision: "MAYBE" })).rejects.toThrow(/DECLINE or APPROVE/)
  })
})
