import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, servePlatform, type TestPlatform, TEST_VAULT_KEY } from "../support/platform.js"
import { queuedDeliveries } from "../support/queue.js"
import { startDeliveries } from "./deliveries.js"
import type { Receiver } from "./receiver.js"

/**
 * Subscription tags, the test event and the endpoint portal's API (docs/webhooks.md#test-events,
 * #the-endpoint-portal), on both stores. The portal page itself is driven in Chromium by
 * portal-browser.test.ts.
 */
describe.each(STORE_KINDS)("webhook tags, test events and the endpoint portal on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let stop: (() => Promise<void>) | undefined

  beforeAll(async () => {
    ;({ platform, receiver, stop } = await startDeliveries(kind, { webhookRetryScheduleMs: [60_000], webhookTimeoutMs: 5000 }))
  })
  afterAll(() => stop?.())

  const subscribe = async (body: Record<string, unknown>) => {
    const response = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["wallet.created"], ...body }
    })
    expect(response.status, response.text).toBe(200)
    return response.body as { id: string; secret: string; url: string; tag: string | null; event_types: Array<string> }
  }
  const listTotal = async (query = "") => {
    const response = await platform.request(
      "GET",
      `/v1/webhook-subscriptions?${query.includes("page_size") ? "" : "page_size=100"}${query}`
    )
    expect(response.status, response.text).toBe(200)
    return response.body as { data: Array<{ id: string; tag: string | null }>; total_count: number }
  }
  /** The receiver's path for a suffix of its URL (subscriptions are told apart by path). */
  const pathOf = (suffix: string) => `${new URL(receiver.url).pathname}${suffix}`
  const portalSession = async (body: Record<string, unknown>) => {
    const response = await platform.request("POST", "/v1/webhook-portal-sessions", { body })
    expect(response.status, response.text).toBe(200)
    const session = response.body as {
      object: string
      url: string
      expires_at: string
      scope_tag: string
      allowed_event_types: Array<string>
    }
    return { ...session, token: new URL(session.url).searchParams.get("session_token")! }
  }
  /** A call of the portal's API with the session token as its only credential (no key, no program). */
  const portal = (token: string, method: string, path: string, body?: unknown) =>
    platform.request(method, `/v1/webhook-portal${path}`, {
      key: undefined,
      program: null,
      headers: { authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body })
    })

  it("tags subscriptions on create and PATCH (null clears), filters by tag with exact totals, refuses bad tags", async () => {
    const a1 = await subscribe({ tag: "customer-a" })
    const a2 = await subscribe({ tag: "customer-a", disabled: true })
    const b = await subscribe({ tag: "customer-b" })
    const untagged = await subscribe({})
    expect([a1.tag, b.tag, untagged.tag]).toEqual(["customer-a", "customer-b", null])
    expect((await platform.request("GET", `/v1/webhook-subscriptions/${a1.id}`)).body.tag).toBe("customer-a")

    const tagged = await listTotal("&tag=customer-a")
    expect(tagged.data.map((s) => s.id)).toEqual([a2.id, a1.id])
    expect(tagged.total_count).toBe(2)
    expect((await listTotal("&tag=customer-a&disabled=false")).data.map((s) => s.id)).toEqual([a1.id])
    expect((await listTotal("&tag=customer-a&page_size=1")).total_count).toBe(2)
    expect((await listTotal("&tag=nobody")).total_count).toBe(0)

    const moved = await platform.request("PATCH", `/v1/webhook-subscriptions/${b.id}`, { body: { tag: "customer-a" } })
    expect(moved.status, moved.text).toBe(200)
    expect(moved.body.tag).toBe("customer-a")
    expect((await listTotal("&tag=customer-a")).total_count).toBe(3)
    const cleared = await platform.request("PATCH", `/v1/webhook-subscriptions/${b.id}`, { body: { tag: null } })
    expect(cleared.body.tag).toBeNull()
    expect((await listTotal("&tag=customer-a")).total_count).toBe(2)
    // Another field changed leaves the tag alone.
    const described = await platform.request("PATCH", `/v1/webhook-subscriptions/${a1.id}`, { body: { description: "x" } })
    expect(described.body.tag).toBe("customer-a")

    const before = (await listTotal()).total_count
    for (const tag of ["", "t".repeat(65), 7, ["a"]]) {
      expectEnvelope(
        await platform.request("POST", "/v1/webhook-subscriptions", { body: { url: receiver.url, event_types: ["wallet.created"], tag } }),
        400,
        { param: "tag" }
      )
      expectEnvelope(await platform.request("PATCH", `/v1/webhook-subscriptions/${a1.id}`, { body: { tag } }), 400, { param: "tag" })
    }
    expectEnvelope(await platform.request("GET", "/v1/webhook-subscriptions?tag="), 400, { param: "tag" })
    expectEnvelope(await platform.request("GET", `/v1/webhook-subscriptions?tag=${"t".repeat(65)}`), 400, { param: "tag" })
    expect((await listTotal()).total_count).toBe(before)
    expect((await platform.request("GET", `/v1/webhook-subscriptions/${a1.id}`)).body.tag).toBe("customer-a")
    // 64 characters is the limit, not past it.
    expect((await subscribe({ tag: "t".repeat(64) })).tag).toBe("t".repeat(64))
    // webhook.test is in the catalogue but no subscription may hold it.
    expectEnvelope(
      await platform.request("POST", "/v1/webhook-subscriptions", { body: { url: receiver.url, event_types: ["webhook.test"] } }),
      400,
      { param: "event_types" }
    )
  })

  it("sends a signed webhook.test event to the one subscription only, answered with its attempt", async () => {
    const target = await subscribe({ url: `${receiver.url}/target`, event_types: ["card.created"] })
    // Another subscription of the program holding every type it may hold: it gets nothing.
    const everything = await subscribe({
      url: `${receiver.url}/other`,
      event_types: [
        "wallet.created",
        "financial_account.created",
        "card.created",
        "card.updated",
        "transfer.created",
        "transaction.updated"
      ]
    })
    const start = receiver.received.length
    const response = await platform.request("POST", `/v1/webhook-subscriptions/${target.id}/test`)
    expect(response.status, response.text).toBe(200)
    const attempt = response.body
    expect(attempt).toMatchObject({ object: "webhook_attempt", webhook_subscription_id: target.id, status: "SUCCESS", response_code: 200 })

    const sent = receiver.received.slice(start).filter((request) => JSON.parse(request.body).id === attempt.event_id)
    expect(sent.map((request) => request.path)).toEqual([pathOf("/target")])
    const payload = new Webhook(target.secret).verify(sent[0]!.body, sent[0]!.headers) as any
    expect(payload).toMatchObject({ object: "event", type: "webhook.test", id: attempt.event_id, program_id: platform.org.program_id })
    expect(payload.data.object).toMatchObject({ object: "webhook_subscription", id: target.id })
    expect(() => new Webhook(everything.secret).verify(sent[0]!.body, sent[0]!.headers)).toThrow()

    // Nothing was queued for the event (no fan-out): nothing more will ever be sent for it.
    expect(await queuedDeliveries(platform.database, { eventId: attempt.event_id })).toBe(0)
    const attempts = await platform.request("GET", `/v1/webhook-attempts?event_id=${attempt.event_id}`)
    expect(attempts.body.data.map((a: any) => a.webhook_subscription_id)).toEqual([target.id])
    // The event is listed, and can be resent to a named subscription.
    expect((await platform.request("GET", `/v1/events/${attempt.event_id}`)).body.type).toBe("webhook.test")
    const resent = await platform.request("POST", `/v1/events/${attempt.event_id}/resend`, { body: { subscription_id: target.id } })
    expect(resent.status, resent.text).toBe(200)
    expect(resent.body.data.map((a: any) => a.webhook_subscription_id)).toEqual([target.id])

    expectEnvelope(await platform.request("POST", `/v1/webhook-subscriptions/${crypto.randomUUID()}/test`), 404, {
      param: "webhook_subscription_id"
    })
    await platform.request("PATCH", `/v1/webhook-subscriptions/${target.id}`, { body: { disabled: true } })
    expectEnvelope(await platform.request("POST", `/v1/webhook-subscriptions/${target.id}/test`), 409)
  })

  it("creates portal sessions: program-scoped, validated, a new tag when none is given", async () => {
    const session = await portalSession({ scope_tag: "customer-c", allowed_event_types: ["card.created", "card.created"] })
    expect(session).toMatchObject({ object: "webhook_portal_session", scope_tag: "customer-c", allowed_event_types: ["card.created"] })
    expect(session.url.startsWith(`${platform.baseUrl}/v1/webhook-portal?session_token=`)).toBe(true)
    expect(session.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const expiresInMs = Date.parse(session.expires_at) - Date.now()
    expect(expiresInMs).toBeGreaterThan(55 * 60_000)
    expect(expiresInMs).toBeLessThanOrEqual(60 * 60_000)

    const generated = await portalSession({})
    expect(generated.scope_tag).toMatch(/^portal_[A-Za-z0-9_-]{16}$/)
    expect(generated.allowed_event_types).not.toContain("webhook.test")
    expect(generated.allowed_event_types).toContain("wallet.created")

    for (const [body, param] of [
      [{ allowed_event_types: ["nope"] }, "allowed_event_types"],
      [{ allowed_event_types: ["webhook.test"] }, "allowed_event_types"],
      [{ allowed_event_types: [] }, "allowed_event_types"],
      [{ allowed_event_types: "card.created" }, "allowed_event_types"],
      [{ scope_tag: "" }, "scope_tag"],
      [{ scope_tag: "x".repeat(65) }, "scope_tag"],
      [{ scope_tag: null }, "scope_tag"],
      [{ customer: "x" }, "customer"]
    ] as const) {
      expectEnvelope(await platform.request("POST", "/v1/webhook-portal-sessions", { body }), 400, { param })
    }
    expectEnvelope(await platform.request("POST", "/v1/webhook-portal-sessions", { body: {}, program: null }), 400, {
      param: "X-Program-ID"
    })
    expectEnvelope(await platform.request("POST", "/v1/webhook-portal-sessions", { body: {}, key: undefined }), 401)
  })

  it("the portal sees and changes only its tag's subscriptions, within its allowed event types", async () => {
    const mine = await portalSession({ scope_tag: "customer-d", allowed_event_types: ["card.created", "card.updated"] })
    const theirs = await subscribe({ tag: "customer-e", url: `${receiver.url}/theirs`, event_types: ["card.created"] })
    const untagged = await subscribe({ url: `${receiver.url}/untagged` })

    const created = await portal(mine.token, "POST", "/subscriptions", { url: `${receiver.url}/mine`, event_types: ["card.created"] })
    expect(created.status, created.text).toBe(200)
    expect(created.body).toMatchObject({ tag: "customer-d", event_types: ["card.created"] })
    expect(created.body.secret).toMatch(/^whsec_/)
    // The API sees it with its tag.
    expect((await listTotal("&tag=customer-d")).data.map((s) => s.id)).toEqual([created.body.id])

    const listed = await portal(mine.token, "GET", "/subscriptions")
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.data.map((s: any) => s.id)).toEqual([created.body.id])
    expect(listed.body.total_count).toBe(1)
    expect(listed.body.data[0].secret).toBeUndefined()

    // Another tag's subscription and an untagged one: 404 on every route, and unchanged.
    for (const other of [theirs, untagged]) {
      const id = other.id
      expectEnvelope(await portal(mine.token, "PATCH", `/subscriptions/${id}`, { disabled: true }), 404, {
        param: "webhook_subscription_id"
      })
      expectEnvelope(await portal(mine.token, "DELETE", `/subscriptions/${id}`), 404, { param: "webhook_subscription_id" })
      expectEnvelope(await portal(mine.token, "POST", `/subscriptions/${id}/rotate-secret`), 404, { param: "webhook_subscription_id" })
      expectEnvelope(await portal(mine.token, "POST", `/subscriptions/${id}/test`), 404, { param: "webhook_subscription_id" })
      expectEnvelope(
        await portal(mine.token, "POST", `/subscriptions/${id}/replay`, { begin: "2020-01-01T00:00:00Z", end: "2030-01-01T00:00:00Z" }),
        404,
        { param: "webhook_subscription_id" }
      )
      expectEnvelope(await portal(mine.token, "GET", `/attempts?webhook_subscription_id=${id}`), 404, { param: "webhook_subscription_id" })
      const after = await platform.request("GET", `/v1/webhook-subscriptions/${id}`)
      expect(after.body).toMatchObject({ disabled: false, tag: other.tag, url: other.url })
    }
    const received = receiver.received.length
    const test = await portal(mine.token, "POST", `/subscriptions/${created.body.id}/test`)
    expect(test.status, test.text).toBe(200)
    expect(test.body).toMatchObject({ webhook_subscription_id: created.body.id, status: "SUCCESS" })
    expect(receiver.received.slice(received).map((request) => request.path)).toEqual([pathOf("/mine")])
    // Resend of that event to another tag's subscription: 404, nothing sent.
    expectEnvelope(await portal(mine.token, "POST", `/events/${test.body.event_id}/resend`, { subscription_id: theirs.id }), 404, {
      param: "subscription_id"
    })
    const resent = await portal(mine.token, "POST", `/events/${test.body.event_id}/resend`, { subscription_id: created.body.id })
    expect(resent.status, resent.text).toBe(200)
    expect(receiver.received.slice(received).map((request) => request.path)).toEqual([pathOf("/mine"), pathOf("/mine")])
    const attempts = await portal(mine.token, "GET", `/attempts?webhook_subscription_id=${created.body.id}`)
    expect(attempts.body.total_count).toBe(2)

    // Allowed event types are enforced on create and PATCH; nothing is written.
    expectEnvelope(
      await portal(mine.token, "POST", "/subscriptions", { url: `${receiver.url}/mine2`, event_types: ["card.created", "wallet.created"] }),
      400,
      { param: "event_types.1" }
    )
    expectEnvelope(await portal(mine.token, "PATCH", `/subscriptions/${created.body.id}`, { event_types: ["transaction.updated"] }), 400, {
      param: "event_types.0"
    })
    // The tag is the session's: the portal cannot set one.
    expectEnvelope(
      await portal(mine.token, "POST", "/subscriptions", {
        url: `${receiver.url}/mine3`,
        event_types: ["card.created"],
        tag: "customer-e"
      }),
      400,
      { param: "tag" }
    )
    expectEnvelope(await portal(mine.token, "PATCH", `/subscriptions/${created.body.id}`, { tag: "customer-e" }), 400, { param: "tag" })
    expectEnvelope(await portal(mine.token, "POST", "/subscriptions", { url: "ftp://x", event_types: ["card.created"] }), 400, {
      param: "url"
    })
    expectEnvelope(await portal(mine.token, "GET", "/attempts"), 400, { param: "webhook_subscription_id" })
    expect((await listTotal("&tag=customer-d")).total_count).toBe(1)
    expect((await platform.request("GET", `/v1/webhook-subscriptions/${created.body.id}`)).body.event_types).toEqual(["card.created"])

    const edited = await portal(mine.token, "PATCH", `/subscriptions/${created.body.id}`, { event_types: ["card.updated"], disabled: true })
    expect(edited.status, edited.text).toBe(200)
    expect(edited.body).toMatchObject({ event_types: ["card.updated"], disabled: true, tag: "customer-d" })
    const removed = await portal(mine.token, "DELETE", `/subscriptions/${created.body.id}`)
    expect(removed.status).toBe(200)
    expect((await listTotal("&tag=customer-d")).total_count).toBe(0)
  })

  it("a portal customer creates at most 20 subscriptions, so it cannot take all of the program's places", async () => {
    const session = await portalSession({ scope_tag: "customer-h" })
    for (let index = 0; index < 20; index++) {
      const created = await portal(session.token, "POST", "/subscriptions", {
        url: `${receiver.url}/h${index}`,
        event_types: ["card.created"]
      })
      expect(created.status, created.text).toBe(200)
    }
    expectEnvelope(
      await portal(session.token, "POST", "/subscriptions", { url: `${receiver.url}/h20`, event_types: ["card.created"] }),
      422,
      { code: "subscription_limit_reached" }
    )
    expect((await listTotal("&tag=customer-h")).total_count).toBe(20)
    // Another customer still can; the API is bound only by the program's limit.
    const other = await portalSession({ scope_tag: "customer-i" })
    expect((await portal(other.token, "POST", "/subscriptions", { url: `${receiver.url}/i`, event_types: ["card.created"] })).status).toBe(
      200
    )
    expect((await subscribe({ tag: "customer-h" })).tag).toBe("customer-h")
    // Leave room under the program's limit of 100 for the other tests.
    for (const subscription of (await listTotal("&tag=customer-h")).data) {
      await platform.request("DELETE", `/v1/webhook-subscriptions/${subscription.id}`)
    }
  })

  it("refuses unknown, malformed, expired and revoked portal tokens with 401", async () => {
    const session = await portalSession({ scope_tag: "customer-f" })
    expect((await portal(session.token, "GET", "/subscriptions")).status).toBe(200)
    for (const token of ["", "junk", "A".repeat(43), `${session.token}x`]) {
      expectEnvelope(await portal(token, "GET", "/subscriptions"), 401, { type: "authentication_error" })
    }
    expectEnvelope(await platform.request("GET", "/v1/webhook-portal/subscriptions", { key: undefined, program: null }), 401)
    // An API key is not a portal token.
    expectEnvelope(await portal(platform.org.api_key, "GET", "/subscriptions"), 401)
    expectEnvelope(await platform.request("GET", "/v1/webhook-portal?session_token=junk", { key: undefined, program: null }), 401)
    const page = await platform.request("GET", `/v1/webhook-portal?session_token=${session.token}`, { key: undefined, program: null })
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-/)
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors *")
    expect(page.text).not.toContain(session.token)

    // A node whose clock is two hours ahead, on the same database: the session has expired there.
    const later = await servePlatform(platform.database, [TEST_VAULT_KEY], {}, { clockOffsetMs: 2 * 60 * 60 * 1000 })
    try {
      const response = await fetch(`${later.baseUrl}/v1/webhook-portal/subscriptions`, {
        headers: { authorization: `Bearer ${session.token}` }
      })
      expect(response.status).toBe(401)
      expect((await fetch(`${later.baseUrl}/v1/webhook-portal?session_token=${session.token}`)).status).toBe(401)
    } finally {
      await later.close()
    }

    // Sessions die with the key that created them.
    const key = await platform.request("POST", "/v1/api-keys", { body: { name: "Portal maker", role: "developer" }, program: null })
    expect(key.status, key.text).toBe(200)
    const made = await platform.request("POST", "/v1/webhook-portal-sessions", { body: { scope_tag: "customer-g" }, key: key.body.secret })
    expect(made.status, made.text).toBe(200)
    const token = new URL(made.body.url).searchParams.get("session_token")!
    expect((await portal(token, "GET", "/subscriptions")).status).toBe(200)
    expect((await platform.request("DELETE", `/v1/api-keys/${key.body.id}`, { program: null })).status).toBe(200)
    expectEnvelope(await portal(token, "GET", "/subscriptions"), 401)
  })
})
