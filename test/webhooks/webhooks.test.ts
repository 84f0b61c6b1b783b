import { EventStore, Events, newEvent } from "@issuing/core"
import { Effect } from "effect"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, type TestPlatform, uuid } from "../support/platform.js"
import { queueDrained } from "../support/queue.js"
import { startDeliveries } from "./deliveries.js"
import { type Receiver, startHeldReceiver } from "./receiver.js"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(STORE_KINDS)("webhooks on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let stop: (() => Promise<void>) | undefined

  beforeAll(async () => {
    ;({ platform, receiver, stop } = await startDeliveries(kind, { webhookRetryScheduleMs: [150, 150, 150], webhookTimeoutMs: 2000 }))
  })
  afterAll(() => stop?.())

  const subscribe = async (body: Record<string, unknown>, program?: string, key?: string) => {
    const response = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["wallet.created"], ...body },
      ...(program ? { program } : {}),
      ...(key ? { key } : {})
    })
    expect(response.status, response.text).toBe(200)
    return response.body as { id: string; secret: string; url: string; event_types: Array<string>; disabled: boolean }
  }
  /** Emits an event straight through the Events service (the outbox), in its own transaction. */
  const emit = (type: "wallet.created" | "card.created" | "transaction.updated", object: unknown = { id: uuid() }) =>
    platform.instance.runtime.runPromise(Effect.flatMap(Events, (events) => events.emit(platform.org.program_id, type, object)))
  const attemptsOf = async (query: string) => {
    const response = await platform.request("GET", `/v1/webhook-attempts?${query}`)
    expect(response.status, response.text).toBe(200)
    return response.body as { data: Array<any>; total_count: number }
  }

  it("creates, lists, reads, updates and deletes subscriptions with validation", async () => {
    const created = await subscribe({ description: "ops", event_types: ["card.created", "wallet.created", "card.created"] })
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(Buffer.from(created.secret.slice(6), "base64").length).toBeGreaterThanOrEqual(24)
    expect(created).toMatchObject({ object: "webhook_subscription", url: receiver.url, description: "ops", disabled: false })
    expect(created.event_types).toEqual(["card.created", "wallet.created"])

    const got = await platform.request("GET", `/v1/webhook-subscriptions/${created.id}`)
    expect(got.status).toBe(200)
    expect(got.body.secret).toBeUndefined()

    const second = await subscribe({ disabled: true })
    const list = await platform.request("GET", "/v1/webhook-subscriptions")
    expect(list.body.data.map((s: any) => s.id).slice(0, 2)).toEqual([second.id, created.id])
    const disabledOnly = await platform.request("GET", "/v1/webhook-subscriptions?disabled=true")
    expect(disabledOnly.body.data.every((s: any) => s.disabled)).toBe(true)
    expect(disabledOnly.body.data.map((s: any) => s.id)).toContain(second.id)
    const enabledOnly = await platform.request("GET", "/v1/webhook-subscriptions?disabled=false&page_size=100")
    expect(enabledOnly.body.data.map((s: any) => s.id)).not.toContain(second.id)
    expectEnvelope(await platform.request("GET", "/v1/webhook-subscriptions?disabled=maybe"), 400, { param: "disabled" })

    const patched = await platform.request("PATCH", `/v1/webhook-subscriptions/${created.id}`, {
      body: { description: "changed", event_types: ["transaction.updated"] }
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body).toMatchObject({ description: "changed", event_types: ["transaction.updated"], url: receiver.url })

    expectEnvelope(
      await platform.request("POST", "/v1/webhook-subscriptions", { body: { url: "ftp://x.example", event_types: ["wallet.created"] } }),
      400,
      { param: "url" }
    )
    expectEnvelope(
      await platform.request("POST", "/v1/webhook-subscriptions", { body: { url: "not a url", event_types: ["wallet.created"] } }),
      400,
      { param: "url" }
    )
    expectEnvelope(await platform.request("POST", "/v1/webhook-subscriptions", { body: { url: receiver.url, event_types: [] } }), 400, {
      param: "event_types"
    })
    expectEnvelope(
      await platform.request("POST", "/v1/webhook-subscriptions", { body: { url: receiver.url, event_types: ["wallet.exploded"] } }),
      400,
      { param: "event_types" }
    )
    expectEnvelope(await platform.request("POST", "/v1/webhook-subscriptions", { body: { event_types: ["wallet.created"] } }), 400, {
      param: "url"
    })
    expectEnvelope(await platform.request("PATCH", `/v1/webhook-subscriptions/${created.id}`, { body: { event_types: ["nope"] } }), 400, {
      param: "event_types"
    })
    // Not an array of strings at all: the same 400 (the message of the event-type check must cope with any value).
    for (const junk of ["' OR '1'='1", 5, null, {}, [1]]) {
      const response = await platform.request("PATCH", `/v1/webhook-subscriptions/${created.id}`, { body: { event_types: junk } })
      expectEnvelope(response, 400)
      expect(response.body.error.param).toMatch(/^event_types/)
    }

    const removed = await platform.request("DELETE", `/v1/webhook-subscriptions/${created.id}`)
    expect(removed.status).toBe(200)
    expectEnvelope(await platform.request("GET", `/v1/webhook-subscriptions/${created.id}`), 404, { param: "webhook_subscription_id" })
    expectEnvelope(await platform.request("GET", "/v1/webhook-subscriptions/not-a-uuid"), 404, { param: "webhook_subscription_id" })
    await platform.request("DELETE", `/v1/webhook-subscriptions/${second.id}`)

    // Another organization's program cannot see it.
    const other = await platform.createOrganization("Other")
    const foreign = await platform.request("GET", `/v1/webhook-subscriptions/${second.id}`, {
      key: other.api_key,
      program: other.program_id
    })
    expectEnvelope(foreign, 404, { param: "webhook_subscription_id" })
  })

  it("delivers signed events that standardwebhooks verifies, to matching enabled subscriptions only", async () => {
    const sub = await subscribe({})
    const offType = await subscribe({ event_types: ["card.created"], url: `${receiver.url}/cards-only` })
    const start = receiver.received.length
    const wallet = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })
    expect(wallet.status, wallet.text).toBe(200)
    await receiver.waitFor((all) => all.slice(start).some((r) => JSON.parse(r.body).data.object.id === wallet.body.id))
    const delivery = receiver.received.slice(start).find((r) => JSON.parse(r.body).data.object.id === wallet.body.id)!
    const payload = new Webhook(sub.secret).verify(delivery.body, delivery.headers) as any
    expect(payload).toMatchObject({ object: "event", type: "wallet.created", program_id: platform.org.program_id })
    expect(delivery.headers["webhook-id"]).toBe(payload.id)
    expect(Math.abs(Number(delivery.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30)
    expect(delivery.headers["content-type"]).toBe("application/json")
    expect(() => new Webhook(offType.secret).verify(delivery.body, delivery.headers)).toThrow()

    // The try is recorded after the answer, in the transaction that completes the delivery: once
    // its attempt is listed, the delivery is done and every count below is final.
    const deadline = Date.now() + 30_000
    while ((await attemptsOf(`event_id=${payload.id}`)).total_count === 0) {
      if (Date.now() > deadline) throw new Error(`No attempt recorded for ${payload.id}`)
      await sleep(20)
    }
    const recorded = await attemptsOf(`event_id=${payload.id}`)
    expect(recorded.total_count).toBe(1)
    expect(recorded.data[0]).toMatchObject({
      object: "webhook_attempt",
      event_id: payload.id,
      webhook_subscription_id: sub.id,
      status: "SUCCESS",
      response_code: 200,
      response_body: "ok"
    })
    expect((await attemptsOf(`event_id=${payload.id}&webhook_subscription_id=${sub.id}`)).total_count).toBe(1)
    expect((await attemptsOf(`event_id=${payload.id}&webhook_subscription_id=${offType.id}`)).total_count).toBe(0)
    // Both subscriptions point at this receiver: exactly one request for the event means the
    // matching subscription got it once and the other type's subscription got nothing.
    expect(receiver.received.filter((r) => r.id === payload.id)).toHaveLength(1)
    await platform.request("DELETE", `/v1/webhook-subscriptions/${sub.id}`)
    await platform.request("DELETE", `/v1/webhook-subscriptions/${offType.id}`)
  })

  it("records a FAILED attempt, retries on the schedule and then succeeds; truncates long bodies", async () => {
    const sub = await subscribe({ url: `${receiver.url}/flaky`, event_types: ["transaction.updated"] })
    let calls = 0
    receiver.reply = (request) => {
      if (!request.headers.host || !request.body.includes("transaction.updated")) return { status: 200, body: "ok" }
      calls += 1
      return calls === 1 ? { status: 500, body: "x".repeat(10_000) } : { status: 200, body: "ok" }
    }
    const event = await emit("transaction.updated")
    for (let i = 0; i < 100; i++) {
      if ((await attemptsOf(`event_id=${event.id}`)).total_count >= 2) break
      await sleep(50)
    }
    receiver.reply = () => ({ status: 200, body: "ok" })
    const attempts = (await attemptsOf(`event_id=${event.id}&order_by=attempted_at&ascending=true`)).data
    expect(attempts.map((a) => a.status)).toEqual(["FAILED", "SUCCESS"])
    expect(attempts[0].response_code).toBe(500)
    expect(attempts[0].response_body).toBe("x".repeat(4096))
    const gap = Date.parse(attempts[1].attempted_at) - Date.parse(attempts[0].attempted_at)
    expect(gap).toBeGreaterThanOrEqual(150 * 0.8 - 5)
    expect((await attemptsOf(`status=FAILED&webhook_subscription_id=${sub.id}`)).total_count).toBe(1)
    expectEnvelope(await platform.request("GET", "/v1/webhook-attempts?status=PENDING"), 400, { param: "status" })
    expectEnvelope(await platform.request("GET", "/v1/webhook-attempts?event_id=abc"), 400, { param: "event_id" })
    await platform.request("DELETE", `/v1/webhook-subscriptions/${sub.id}`)
  })

  it("honours 410 Gone by disabling the subscription; a disabled subscription gets nothing", async () => {
    const sub = await subscribe({ url: `${receiver.url}/gone`, event_types: ["card.created"] })
    receiver.reply = (request) => (request.body.includes("card.created") ? { status: 410, body: "gone" } : { status: 200 })
    const first = await emit("card.created")
    await receiver.waitFor((all) => all.some((r) => r.id === first.id))
    for (let i = 0; i < 100; i++) {
      if ((await platform.request("GET", `/v1/webhook-subscriptions/${sub.id}`)).body.disabled) break
      await sleep(50)
    }
    expect((await platform.request("GET", `/v1/webhook-subscriptions/${sub.id}`)).body.disabled).toBe(true)
    receiver.reply = () => ({ status: 200, body: "ok" })
    // A witness subscribed to the same type shows the next event was fanned out and delivered;
    // once the queue holds nothing for the disabled subscription, nothing can reach it any more.
    const witness = await subscribe({ url: `${receiver.url}/witness-410`, event_types: ["card.created"] })
    const second = await emit("card.created")
    await receiver.waitFor((all) => all.some((r) => r.id === second.id && r.path.endsWith("/witness-410")))
    await queueDrained(platform.database, { eventId: second.id })
    await queueDrained(platform.database, { subscriptionId: sub.id })
    expect(receiver.received.filter((r) => r.id === second.id).map((r) => r.path)).toEqual(["/hooks/witness-410"])
    expect((await attemptsOf(`event_id=${first.id}`)).data[0]).toMatchObject({ status: "FAILED", response_code: 410 })
    await platform.request("DELETE", `/v1/webhook-subscriptions/${sub.id}`)
    await platform.request("DELETE", `/v1/webhook-subscriptions/${witness.id}`)
  })

  it("rotates the secret: both the old and the new secret verify for 24 h", async () => {
    const sub = await subscribe({ url: `${receiver.url}/rotate`, event_types: ["transaction.updated"] })
    const rotated = await platform.request("POST", `/v1/webhook-subscriptions/${sub.id}/rotate-secret`)
    expect(rotated.status, rotated.text).toBe(200)
    expect(rotated.body.secret).not.toBe(sub.secret)
    const event = await emit("transaction.updated")
    await receiver.waitFor((all) => all.some((r) => r.id === event.id && r.headers.host !== undefined))
    const delivery = receiver.received.find((r) => r.id === event.id)!
    expect(delivery.headers["webhook-signature"].split(" ")).toHaveLength(2)
    expect(new Webhook(rotated.body.secret).verify(delivery.body, delivery.headers)).toMatchObject({ id: event.id })
    expect(new Webhook(sub.secret).verify(delivery.body, delivery.headers)).toMatchObject({ id: event.id })
    await platform.request("DELETE", `/v1/webhook-subscriptions/${sub.id}`)
  })

  it("replays an inclusive window, successes included, and answers a retried key with the original count", async () => {
    const sub = await subscribe({ url: `${receiver.url}/replay`, event_types: ["card.created"] })
    const events = []
    for (let i = 0; i < 4; i++) {
      events.push(await emit("card.created"))
      await sleep(5)
    }
    await emit("wallet.created") // another type, never replayed to this subscription
    await receiver.waitFor((all) => events.every((e) => all.some((r) => r.id === e.id)))
    const replay = (begin: string, end: string, idempotencyKey?: string) =>
      platform.request("POST", `/v1/webhook-subscriptions/${sub.id}/replay`, { body: { begin, end }, idempotencyKey })
    const exact = await replay(events[1]!.created_at, events[2]!.created_at)
    expect(exact.status, exact.text).toBe(200)
    expect(exact.body).toEqual({
      object: "webhook_replay",
      webhook_subscription_id: sub.id,
      begin: events[1]!.created_at,
      end: events[2]!.created_at,
      events_queued: 2
    })
    await receiver.waitFor(
      (all) => all.filter((r) => r.id === events[1]!.id).length === 2 && all.filter((r) => r.id === events[2]!.id).length === 2
    )
    const shift = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()
    expect((await replay(shift(events[1]!.created_at, 1), shift(events[2]!.created_at, -1))).body.events_queued).toBe(0)
    expect((await replay(events[0]!.created_at, events[3]!.created_at)).body.events_queued).toBe(4)
    // Sub-millisecond bounds round inward: .xxx5 after the event's millisecond excludes it.
    expect((await replay(events[0]!.created_at.replace("Z", "500Z"), events[1]!.created_at)).body.events_queued).toBe(1)
    expect((await replay(events[0]!.created_at, events[1]!.created_at.replace("Z", "999Z"))).body.events_queued).toBe(2)

    const key = uuid()
    const first = await replay(events[0]!.created_at, events[3]!.created_at, key)
    await emit("card.created")
    const again = await replay(events[0]!.created_at, events[3]!.created_at, key)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body).toEqual(first.body)

    expectEnvelope(await replay("yesterday", events[0]!.created_at), 400, { param: "begin" })
    expectEnvelope(await replay(events[0]!.created_at, "2026-13-01T00:00:00Z"), 400, { param: "end" })
    expectEnvelope(
      await platform.request("POST", `/v1/webhook-subscriptions/${sub.id}/replay`, { body: { end: events[0]!.created_at } }),
      400,
      { param: "begin" }
    )
    // Without a body, begin is missing like any other missing field (param begin, not a null param).
    expectEnvelope(await platform.request("POST", `/v1/webhook-subscriptions/${sub.id}/replay`), 400, { param: "begin" })
    expectEnvelope(await replay(events[3]!.created_at, events[0]!.created_at), 422, { code: "invalid_time_window" })
    // A window as wide as you like over a short history queues that history.
    expect((await replay("2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z")).body.events_queued).toBeGreaterThanOrEqual(5)
    // Valid RFC 3339 bounds beyond any event time (year 0000, an offset crossing year 0 or 9999)
    // queue nothing: never a 500 (PostgreSQL refuses such timestamps). A leap second parses.
    for (const [begin, end] of [
      ["0000-01-01T00:00:00Z", "0000-01-02T00:00:00Z"],
      ["0000-01-01T00:30:00+01:00", "0000-01-02T00:00:00Z"],
      ["9999-12-31T00:00:00Z", "9999-12-31T23:00:00-05:00"],
      ["2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z"]
    ] as const) {
      const outside = await replay(begin, end)
      expect(outside.status, outside.text).toBe(200)
      expect(outside.body).toMatchObject({ begin, end, events_queued: 0 })
    }
    expectEnvelope(
      await platform.request("POST", `/v1/webhook-subscriptions/${uuid()}/replay`, {
        body: { begin: events[0]!.created_at, end: events[0]!.created_at }
      }),
      404,
      { param: "webhook_subscription_id" }
    )
    await platform.request("PATCH", `/v1/webhook-subscriptions/${sub.id}`, { body: { disabled: true } })
    expectEnvelope(await replay(events[0]!.created_at, events[3]!.created_at), 409, { code: "conflict" })
    await platform.request("DELETE", `/v1/webhook-subscriptions/${sub.id}`)
  })

  it("bounds a replay by the span of history it re-sends: 31 days from its first event to its last", async () => {
    const other = await platform.createOrganization("Replay history")
    const sub = await subscribe({ url: `${receiver.url}/history`, event_types: ["card.created"] }, other.program_id, other.api_key)
    const day = 24 * 60 * 60 * 1000
    const now = Date.now()
    const at = (daysAgo: number) => new Date(now - daysAgo * day).toISOString()
    // Old history written straight to the outbox (no fan-out): 40, 20 and 1 days ago.
    const old = [40, 20, 1].map((daysAgo) => newEvent(other.program_id, "card.created", at(daysAgo), { id: uuid() }))
    await platform.instance.runtime.runPromise(Effect.flatMap(EventStore, (store) => store.appendAll(old)))
    const replay = (begin: string, end: string) =>
      platform.request("POST", `/v1/webhook-subscriptions/${sub.id}/replay`, {
        body: { begin, end },
        key: other.api_key,
        program: other.program_id
      })

    const ids = new Set(old.map((event) => event.id))
    const receivedOld = () => receiver.received.filter((r) => ids.has(r.id))

    // The window holds events 40 days to 1 day old: a 39-day span, past the bound; nothing is queued.
    expectEnvelope(await replay("2000-01-01T00:00:00Z", at(0)), 422, { code: "replay_window_too_large", param: "end" })
    expectEnvelope(await replay(at(41), at(0)), 422, { code: "replay_window_too_large", param: "end" })
    // A refused replay queued nothing (the queue is read after its answer), so nothing is sent.
    await queueDrained(platform.database, { subscriptionId: sub.id }, 0)
    expect(receivedOld()).toHaveLength(0)
    // A 60-day window whose events span 19 days is within it; so is a window far wider than its one event.
    const recent = await replay(at(30), at(-30))
    expect(recent.status, recent.text).toBe(200)
    expect(recent.body.events_queued).toBe(2)
    expect((await replay("2000-01-01T00:00:00Z", at(30))).body.events_queued).toBe(1)
    await receiver.waitFor(() => receivedOld().length === 3)
    expect(new Set(receivedOld().map((r) => r.id))).toEqual(ids)
  })

  it("resends to one and to all matching subscriptions with a synchronous first attempt", async () => {
    const a = await subscribe({ url: `${receiver.url}/a`, event_types: ["transaction.updated"] })
    const b = await subscribe({ url: `${receiver.url}/b`, event_types: ["transaction.updated", "card.created"] })
    const cardsOnly = await subscribe({ url: `${receiver.url}/c`, event_types: ["card.created"] })
    const event = await emit("transaction.updated")
    await receiver.waitFor((all) => all.filter((r) => r.id === event.id).length >= 2)

    const one = await platform.request("POST", `/v1/events/${event.id}/resend`, { body: { subscription_id: a.id } })
    expect(one.status, one.text).toBe(200)
    expect(one.body.total_count).toBe(1)
    expect(one.body.data[0]).toMatchObject({
      object: "webhook_attempt",
      event_id: event.id,
      webhook_subscription_id: a.id,
      status: "SUCCESS",
      response_code: 200
    })

    receiver.reply = (request) =>
      request.headers.host && request.body.includes(event.id) && receiver.received.filter((r) => r.id === event.id).length > 3
        ? { status: 503, body: "busy", headers: { "retry-after": "1" } }
        : { status: 200, body: "ok" }
    const key = uuid()
    const all = await platform.request("POST", `/v1/events/${event.id}/resend`, { body: {}, idempotencyKey: key })
    expect(all.status, all.text).toBe(200)
    expect(all.body.data.map((x: any) => x.webhook_subscription_id).sort()).toEqual([a.id, b.id].sort())
    expect(all.body.data.every((x: any) => x.status === "FAILED" && x.response_code === 503)).toBe(true)
    const repeated = await platform.request("POST", `/v1/events/${event.id}/resend`, { body: {}, idempotencyKey: key })
    expect(repeated.body).toEqual(all.body)
    receiver.reply = () => ({ status: 200, body: "ok" })
    // Every body field of resend is optional (docs/webhooks.md, Resend): no body at all is an empty one.
    for (const headers of [{}, { "content-type": "application/json" }]) {
      const bodiless = await platform.request("POST", `/v1/events/${event.id}/resend`, { headers })
      expect(bodiless.status, bodiless.text).toBe(200)
      expect(bodiless.body.data.map((x: any) => x.webhook_subscription_id).sort()).toEqual([a.id, b.id].sort())
    }

    expectEnvelope(await platform.request("POST", `/v1/events/${event.id}/resend`, { body: { subscription_id: cardsOnly.id } }), 422, {
      code: "event_type_not_subscribed",
      param: "subscription_id"
    })
    expectEnvelope(await platform.request("POST", `/v1/events/${uuid()}/resend`, { body: {} }), 404, { param: "event_id" })
    expectEnvelope(await platform.request("POST", `/v1/events/nope/resend`, { body: {} }), 404, { param: "event_id" })
    expectEnvelope(await platform.request("POST", `/v1/events/${event.id}/resend`, { body: { subscription_id: uuid() } }), 404, {
      param: "subscription_id"
    })
    // A malformed body subscription_id fails validation (400); malformed path ids stay 404.
    for (const malformed of ["not-a-uuid", "", `${a.id}x`]) {
      expectEnvelope(await platform.request("POST", `/v1/events/${event.id}/resend`, { body: { subscription_id: malformed } }), 400, {
        code: "invalid_request",
        param: "subscription_id"
      })
    }
    expectEnvelope(
      await platform.request("POST", `/v1/events/${event.id}/resend`, { body: { subscription_id: "nope" }, idempotencyKey: uuid() }),
      400,
      { param: "subscription_id" }
    )
    await platform.request("PATCH", `/v1/webhook-subscriptions/${a.id}`, { body: { disabled: true } })
    expectEnvelope(await platform.request("POST", `/v1/events/${event.id}/resend`, { body: { subscription_id: a.id } }), 409, {
      code: "conflict"
    })
    const unsubscribed = await emit("wallet.created")
    for (const id of [a.id, b.id, cardsOnly.id]) await platform.request("DELETE", `/v1/webhook-subscriptions/${id}`)
    expectEnvelope(await platform.request("POST", `/v1/events/${unsubscribed.id}/resend`, { body: {} }), 422, {
      code: "event_type_not_subscribed"
    })
  })
  it("holds no database transaction across resend's delivery, even with an Idempotency-Key", async () => {
    // The event exists before the subscription, so the worker never delivers it: only the resend does.
    const event = await emit("card.created")
    const held = await startHeldReceiver(200, "ok")
    try {
      const target = await subscribe({ url: held.url, event_types: ["card.created"] })
      const key = uuid()
      const resend = platform.request("POST", `/v1/events/${event.id}/resend`, {
        body: { subscription_id: target.id },
        idempotencyKey: key
      })
      await held.arrival
      // While the receiver holds resend's POST, another write commits: nothing waits on a held transaction.
      const write = await platform.request("POST", "/v1/webhook-subscriptions", {
        body: { url: receiver.url, event_types: ["wallet.created"], description: "written during a resend" }
      })
      expect(write.status, write.text).toBe(200)
      expect(held.heldOpen()).toBe(true)
      held.release()
      const done = await resend
      expect(done.status, done.text).toBe(200)
      expect(done.body.data[0]).toMatchObject({ webhook_subscription_id: target.id, status: "SUCCESS" })
      const replayed = await platform.request("POST", `/v1/events/${event.id}/resend`, {
        body: { subscription_id: target.id },
        idempotencyKey: key
      })
      expect(replayed.headers.get("idempotent-replayed")).toBe("true")
      expect(replayed.body).toEqual(done.body)
    } finally {
      await held.close()
    }
  })

  it("answers a resend whose subscription is deleted during the try, and queues no retry for it", async () => {
    const event = await emit("card.created")
    const failing = await startHeldReceiver(500, "down", "/gone-soon")
    try {
      const target = await subscribe({ url: failing.url, event_types: ["card.created"] })
      const resend = platform.request("POST", `/v1/events/${event.id}/resend`, { body: { subscription_id: target.id } })
      await failing.arrival
      expect((await platform.request("DELETE", `/v1/webhook-subscriptions/${target.id}`)).status).toBe(200)
      failing.release()
      const done = await resend
      expect(done.status, done.text).toBe(200)
      expect(done.body.data[0]).toMatchObject({ webhook_subscription_id: target.id, status: "FAILED", response_code: 500 })
      // The retry (150 ms on this schedule) is never made: resend answers after recording its
      // outcome, and the queue holds nothing for the deleted subscription.
      await queueDrained(platform.database, { subscriptionId: target.id }, 0)
      expect(failing.calls()).toBe(1)
    } finally {
      await failing.close()
    }
  })
})

describe.each(STORE_KINDS)("disabling a failing subscription on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let stop: (() => Promise<void>) | undefined
  beforeAll(async () => {
    // Failures for longer than 400 ms (instead of 5 days) disable the subscription.
    ;({ platform, receiver, stop } = await startDeliveries(kind, {
      webhookRetryScheduleMs: Array(40).fill(100),
      webhookDisableAfterMs: 400
    }))
  })
  afterAll(() => stop?.())

  it("disables it once its deliveries have failed for the configured time, and then sends nothing", async () => {
    receiver.reply = () => ({ status: 500, body: "broken" })
    const created = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["card.created"] }
    })
    const events = (type: "card.created") =>
      platform.instance.runtime.runPromise(Effect.flatMap(Events, (e) => e.emit(platform.org.program_id, type, { id: uuid() })))
    const first = await events("card.created")
    for (let i = 0; i < 100; i++) {
      if ((await platform.request("GET", `/v1/webhook-subscriptions/${created.body.id}`)).body.disabled) break
      await sleep(50)
    }
    const sub = await platform.request("GET", `/v1/webhook-subscriptions/${created.body.id}`)
    expect(sub.body.disabled).toBe(true)
    const tries = receiver.received.filter((r) => r.id === first.id).length
    expect(tries).toBeGreaterThanOrEqual(3)
    const attempts = await platform.request("GET", `/v1/webhook-attempts?event_id=${first.id}&page_size=100`)
    expect(attempts.body.total_count).toBe(tries)
    expect(attempts.body.data.every((a: any) => a.status === "FAILED" && a.response_code === 500)).toBe(true)

    const later = await events("card.created")
    // Nothing queued for the disabled subscription (its deliveries dropped, the later event not
    // fanned out to it): nothing more can be sent to it.
    await queueDrained(platform.database, { subscriptionId: created.body.id })
    expect(receiver.received.filter((r) => r.id === first.id)).toHaveLength(tries)
    expect(receiver.received.some((r) => r.id === later.id)).toBe(false)
  })
})

describe.each(STORE_KINDS)("a retry due at once, on %s", (kind) => {
  let platform: TestPlatform
  let receiver: Receiver
  let stop: (() => Promise<void>) | undefined
  beforeAll(async () => {
    // A retry due at once: the recording reschedules the failed try due now and wakes the claim
    // loop, which claims it again — possibly before the recorder has let go of the try it recorded
    // (the dispatch then takes it as soon as it has) — and sends it straight away.
    ;({ platform, receiver, stop } = await startDeliveries(kind, { webhookRetryScheduleMs: [0] }))
  })
  afterAll(() => stop?.())

  it("keeps the claim on the retry while it runs: the second try is sent once and recorded as its answer", async () => {
    const created = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["card.created"] }
    })
    expect(created.status, created.text).toBe(200)
    let calls = 0
    // The second try outlasts several of the worker's claim checks (every 250 ms) and a renewal (every second).
    receiver.reply = () => (++calls === 1 ? { status: 500, body: "first" } : { status: 200, body: "second", delayMs: 1500 })
    const event = await platform.instance.runtime.runPromise(
      Effect.flatMap(Events, (events) => events.emit(platform.org.program_id, "card.created", { id: uuid() }))
    )
    await queueDrained(platform.database, { subscriptionId: created.body.id })
    const attempts = await platform.request("GET", `/v1/webhook-attempts?event_id=${event.id}&order_by=attempted_at&ascending=true`)
    expect(attempts.status, attempts.text).toBe(200)
    expect(attempts.body.data.map((a: any) => [a.status, a.response_code, a.response_body])).toEqual([
      ["FAILED", 500, "first"],
      ["SUCCESS", 200, "second"]
    ])
    expect(receiver.received.filter((r) => r.id === event.id)).toHaveLength(2)
  })
})
