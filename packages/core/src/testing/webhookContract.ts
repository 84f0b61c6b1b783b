import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { EventStore } from "../events/EventStore.js"
import { type EventType, type IssuingEvent, newEvent } from "../events/Records.js"
import { newId } from "../platform/Ids.js"
import type { PageWindow } from "../platform/Paging.js"
import { Transactor } from "../sql/Transactor.js"
import { AccessStore } from "../access/AccessStore.js"
import { hashSecret } from "../access/Secrets.js"
import type { StoredPortalSession, StoredSubscription, WebhookAttempt } from "../webhooks/Records.js"
import { type FinishedTries, WebhookStore, type WebhookStoreService } from "../webhooks/WebhookStore.js"
import type { PortContract } from "./Contract.js"
import { awaitSuspended, freshOrganization, sampleApiKey } from "./Fixtures.js"

const newestFirst = (limit = 100, offset = 0): PageWindow<"created_at"> => ({ orderBy: "created_at", descending: true, limit, offset })

const sorted = (ids: ReadonlyArray<string>) => [...ids].sort()

const iso = (ms: number) => new Date(ms).toISOString()

/** Far enough ahead that every delivery a test queued is due. */
const FAR_FUTURE = "9999-01-01T00:00:00.000Z"
/** Later still: every lease a test took (at most a minute past FAR_FUTURE) has ended. */
const END_OF_LEASES = "9999-12-31T00:00:00.000Z"

/** A subscription record of the program (not stored). */
const subscription = (
  programId: string,
  eventTypes: ReadonlyArray<EventType>,
  overrides: Partial<StoredSubscription> = {}
): StoredSubscription => {
  const at = new Date().toISOString()
  const id = newId()
  return {
    id,
    object: "webhook_subscription",
    program_id: programId,
    url: `https://example.com/hooks/${id}`,
    description: "contract",
    event_types: eventTypes,
    disabled: false,
    tag: null,
    secret_sealed: "v1.contract.sealed-secret",
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    metadata: { owner: "payments" },
    created_at: at,
    updated_at: at,
    ...overrides
  }
}

/** An event of the program, stored in the outbox (claims and replays read it back). */
const storedEvent = (programId: string, type: IssuingEvent["type"], createdAt = new Date().toISOString()) =>
  Effect.gen(function* () {
    const event = newEvent(programId, type, createdAt, { id: newId(), type, amount: 125 })
    yield* (yield* EventStore).append(event)
    return event
  })

/**
 * Empties the queue of this contract's database (every test of a contract shares it), so a test's
 * claims see only its own deliveries.
 */
const drainQueue = (webhooks: WebhookStoreService) =>
  Effect.gen(function* () {
    const token = newId()
    for (;;) {
      const claimed = yield* webhooks.claimDue(token, END_OF_LEASES, END_OF_LEASES, 1_000)
      if (claimed.length === 0) return
      yield* webhooks.completeDeliveries(
        token,
        claimed.map((delivery) => delivery.id)
      )
    }
  })

/** Every due delivery at `nowIso`, claimed under a new token (lease of one minute past `nowIso`). */
const claimAll = (webhooks: WebhookStoreService, nowIso: string, token = newId()) =>
  webhooks.claimDue(token, nowIso, iso(Date.parse(nowIso) + 60_000), 1_000)

const pairs = (deliveries: ReadonlyArray<{ readonly event_id: string; readonly subscription_id: string }>) =>
  deliveries.map((delivery) => `${delivery.event_id} → ${delivery.subscription_id}`).sort()

/** Contract of the WebhookStore port: subscriptions, the fan-out, the leased delivery queue, replay and attempts. */
export const webhookContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("stores subscriptions, found and listed only within their program", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const transactor = yield* Transactor
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const at = new Date().toISOString()
        // One timestamp for all: ids order them; inserted in reverse id order.
        const ids = Array.from({ length: 4 }, () => newId())
        const stored = [...ids].reverse().map((id, index) =>
          subscription(program.id, ["card.created", "card.updated"], {
            id,
            disabled: index === 0,
            tag: index >= 2 ? "customer-a" : null,
            previous_secret_sealed: index === 1 ? "v1.contract.previous" : null,
            previous_secret_expires_at: index === 1 ? at : null,
            created_at: at,
            updated_at: at
          })
        )
        for (const item of stored) yield* webhooks.insertSubscription(item)

        for (const item of stored) expect(Option.getOrThrow(yield* webhooks.findSubscription(program.id, item.id))).toEqual(item)
        const locked = yield* transactor.withTransaction(webhooks.findSubscription(program.id, ids[0]!, true))
        expect(Option.getOrThrow(locked).id).toBe(ids[0])
        expect(Option.isNone(yield* webhooks.findSubscription(other.program.id, ids[0]!))).toBe(true)
        expect(Option.isNone(yield* webhooks.findSubscription(program.id, newId()))).toBe(true)

        const all = yield* webhooks.listSubscriptions(program.id, {}, newestFirst())
        expect(all.total).toBe(4)
        expect(all.rows.map((row) => row.id)).toEqual(sorted(ids).reverse())
        expect((yield* webhooks.listSubscriptions(program.id, {}, newestFirst(3, 3))).rows.map((row) => row.id)).toEqual([sorted(ids)[0]])
        expect((yield* webhooks.listSubscriptions(program.id, { disabled: true }, newestFirst())).rows.map((row) => row.id)).toEqual([
          stored[0]!.id
        ])
        expect((yield* webhooks.listSubscriptions(program.id, { disabled: false }, newestFirst())).total).toBe(3)
        // A tag's subscriptions (stored[2] and stored[3]), newest first, alone or with disabled.
        const tagged = yield* webhooks.listSubscriptions(program.id, { tag: "customer-a" }, newestFirst())
        expect(tagged.rows.map((row) => row.id)).toEqual(sorted([stored[2]!.id, stored[3]!.id]).reverse())
        expect(tagged.total).toBe(2)
        expect((yield* webhooks.listSubscriptions(program.id, { tag: "customer-a", disabled: true }, newestFirst())).total).toBe(0)
        expect((yield* webhooks.listSubscriptions(program.id, { tag: "customer-b" }, newestFirst())).rows).toEqual([])
        expect((yield* webhooks.listSubscriptions(other.program.id, { tag: "customer-a" }, newestFirst())).total).toBe(0)
        expect(yield* webhooks.countSubscriptions(program.id)).toBe(4)
        expect(yield* webhooks.countSubscriptions(program.id, "customer-a")).toBe(2)
        expect(yield* webhooks.countSubscriptions(program.id, "customer-b")).toBe(0)
        expect(yield* webhooks.countSubscriptions(other.program.id)).toBe(0)
        expect((yield* webhooks.listSubscriptions(other.program.id, {}, newestFirst())).total).toBe(0)

        // Enabled and disabled ones holding the type, by creation then id; none of another program.
        expect((yield* webhooks.subscriptionsForType(program.id, "card.created")).map((row) => row.id)).toEqual(sorted(ids))
        expect(yield* webhooks.subscriptionsForType(program.id, "wallet.created")).toEqual([])
        expect(yield* webhooks.subscriptionsForType(other.program.id, "card.created")).toEqual([])
      })
    )

    it.effect("stores portal sessions by token hash, found while their key is unrevoked, purged once expired", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const access = yield* AccessStore
        const { organization, program } = yield* freshOrganization
        const key = sampleApiKey(organization.id, { role: "developer" })
        yield* access.insertApiKey(key, hashSecret(`portal-${key.id}`))
        const now = Date.now()
        const session = (expiresAtMs: number): StoredPortalSession => ({
          id: newId(),
          program_id: program.id,
          token_hash: hashSecret(newId()),
          api_key_id: key.id,
          scope_tag: "customer-a",
          allowed_event_types: ["card.created", "transfer.created"],
          created_at: iso(now),
          expires_at: iso(expiresAtMs)
        })
        const live = session(now + 60_000)
        const expired = session(now - 60_000)
        yield* webhooks.insertPortalSession(live)
        yield* webhooks.insertPortalSession(expired)
        expect(Option.getOrThrow(yield* webhooks.findPortalSession(live.token_hash))).toEqual(live)
        // Expiry is the service's check: the store still finds an expired session until it is purged.
        expect(Option.getOrThrow(yield* webhooks.findPortalSession(expired.token_hash)).id).toBe(expired.id)
        expect(Option.isNone(yield* webhooks.findPortalSession(hashSecret("unknown")))).toBe(true)

        expect(yield* webhooks.purgePortalSessions(iso(now))).toBeGreaterThanOrEqual(1)
        expect(Option.isNone(yield* webhooks.findPortalSession(expired.token_hash))).toBe(true)
        expect(Option.isSome(yield* webhooks.findPortalSession(live.token_hash))).toBe(true)

        // A session dies with the key that created it.
        yield* access.revokeApiKey(organization.id, key.id, iso(Date.now()))
        expect(Option.isNone(yield* webhooks.findPortalSession(live.token_hash))).toBe(true)
      })
    )

    it.effect("updates every mutable field; the fan-out follows the new event types", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        yield* drainQueue(webhooks)
        const original = subscription(program.id, ["card.created"])
        yield* webhooks.insertSubscription(original)
        const updated: StoredSubscription = {
          ...original,
          url: "https://example.org/elsewhere",
          description: "changed",
          event_types: ["card.updated", "wallet.created"],
          secret_sealed: "v1.contract.rotated",
          previous_secret_sealed: original.secret_sealed,
          previous_secret_expires_at: iso(Date.now() + 86_400_000),
          metadata: { owner: "risk", "env 2": "staging" },
          updated_at: iso(Date.now() + 1_000)
        }
        yield* webhooks.updateSubscription(updated)
        expect(Option.getOrThrow(yield* webhooks.findSubscription(program.id, original.id))).toEqual(updated)
        expect(yield* webhooks.subscriptionsForType(program.id, "card.created")).toEqual([])
        expect((yield* webhooks.subscriptionsForType(program.id, "wallet.created")).map((row) => row.id)).toEqual([original.id])

        expect(yield* webhooks.enqueueEvent(yield* storedEvent(program.id, "card.created"))).toBe(0)
        expect(yield* webhooks.enqueueEvent(yield* storedEvent(program.id, "card.updated"))).toBe(1)

        // Another program's update of the id leaves the row alone.
        yield* webhooks.updateSubscription({ ...updated, program_id: other.program.id, url: "https://evil.example" })
        expect(Option.getOrThrow(yield* webhooks.findSubscription(program.id, original.id)).url).toBe(updated.url)
        yield* drainQueue(webhooks)
      })
    )

    // An update naming another program must change nothing: not the row, not its fan-out index.
    it.effect("an update naming another program leaves the subscription's fan-out alone", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const original = subscription(program.id, ["card.created"])
        yield* webhooks.insertSubscription(original)
        yield* webhooks.updateSubscription({ ...original, program_id: other.program.id, event_types: ["wallet.created"] })
        expect((yield* webhooks.subscriptionsForType(program.id, "card.created")).map((row) => row.id)).toEqual([original.id])
        expect(yield* webhooks.subscriptionsForType(other.program.id, "wallet.created")).toEqual([])
      })
    )

    it.effect("deletes a subscription with its queued deliveries; another program cannot delete it", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        yield* drainQueue(webhooks)
        const doomed = subscription(program.id, ["card.created"])
        const kept = subscription(program.id, ["card.created"])
        yield* webhooks.insertSubscription(doomed)
        yield* webhooks.insertSubscription(kept)
        const event = yield* storedEvent(program.id, "card.created")
        expect(yield* webhooks.enqueueEvent(event)).toBe(2)

        expect(yield* webhooks.deleteSubscription(other.program.id, doomed.id)).toBe(false)
        expect(Option.isSome(yield* webhooks.findSubscription(program.id, doomed.id))).toBe(true)
        expect(yield* webhooks.deleteSubscription(program.id, doomed.id)).toBe(true)
        expect(yield* webhooks.deleteSubscription(program.id, doomed.id)).toBe(false)
        expect(Option.isNone(yield* webhooks.findSubscription(program.id, doomed.id))).toBe(true)
        expect(yield* webhooks.subscriptionsForType(program.id, "card.created")).toEqual([kept])
        expect(pairs(yield* claimAll(webhooks, FAR_FUTURE))).toEqual(pairs([{ event_id: event.id, subscription_id: kept.id }]))
        yield* drainQueue(webhooks)
      })
    )

    it.effect("fans out one delivery per enabled subscription of the program holding the type, none for disabled ones", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        yield* drainQueue(webhooks)
        const both = subscription(program.id, ["card.created", "card.updated"])
        const updatesOnly = subscription(program.id, ["card.updated"])
        const disabled = subscription(program.id, ["card.created", "card.updated"], { disabled: true })
        const wallets = subscription(program.id, ["wallet.created"])
        const elsewhere = subscription(other.program.id, ["card.created", "card.updated"])
        for (const item of [both, updatesOnly, disabled, wallets, elsewhere]) yield* webhooks.insertSubscription(item)

        const created = yield* storedEvent(program.id, "card.created")
        const updated = yield* storedEvent(program.id, "card.updated")
        expect(yield* webhooks.enqueueEvents([])).toBe(0)
        expect(yield* webhooks.enqueueEvents([created, updated])).toBe(3)
        expect(yield* webhooks.nextDueAt).toEqual(Option.some(created.created_at))

        const claimed = yield* claimAll(webhooks, FAR_FUTURE)
        expect(pairs(claimed)).toEqual(
          pairs([
            { event_id: created.id, subscription_id: both.id },
            { event_id: updated.id, subscription_id: both.id },
            { event_id: updated.id, subscription_id: updatesOnly.id }
          ])
        )
        // A claim carries what sending needs: the event, the URL, the sealed secrets.
        const first = claimed.find((delivery) => delivery.event_id === created.id)!
        expect(first).toMatchObject({
          program_id: program.id,
          subscription_id: both.id,
          attempt_count: 0,
          event_type: "card.created",
          event_created_at: created.created_at,
          url: both.url,
          disabled: false,
          secret_sealed: both.secret_sealed,
          previous_secret_sealed: null,
          previous_secret_expires_at: null,
          subscription_updated_at: both.updated_at
        })
        expect(JSON.parse(first.event_data)).toEqual(created.data.object)

        // One event alone: the same rows as in a batch.
        const third = yield* storedEvent(program.id, "card.created")
        expect(yield* webhooks.enqueueEvent(third)).toBe(1)
        expect(pairs(yield* claimAll(webhooks, FAR_FUTURE))).toEqual(pairs([{ event_id: third.id, subscription_id: both.id }]))
        yield* drainQueue(webhooks)
        expect(yield* webhooks.nextDueAt).toEqual(Option.none())
      })
    )

    it.effect("appends a lone emit's events and queues their fan-out in one call, where the store has one", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const events = yield* EventStore
        if (Option.isNone(webhooks.appendAndEnqueueAtOnce)) return
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        const both = subscription(program.id, ["card.created", "card.updated"])
        const disabled = subscription(program.id, ["card.created"], { disabled: true })
        for (const item of [both, disabled]) yield* webhooks.insertSubscription(item)
        const at = new Date().toISOString()
        const emitted = [
          newEvent(program.id, "card.created", at, { id: newId() }),
          newEvent(program.id, "card.updated", at, { id: newId() })
        ]
        expect(yield* webhooks.appendAndEnqueueAtOnce.value(emitted)).toBe(2)
        for (const event of emitted) expect(Option.getOrThrow(yield* events.find(program.id, event.id))).toEqual(event)
        expect(pairs(yield* claimAll(webhooks, FAR_FUTURE))).toEqual(
          pairs(emitted.map((event) => ({ event_id: event.id, subscription_id: both.id })))
        )
        // No subscription holds the type: the events are appended, nothing is queued.
        expect(yield* webhooks.appendAndEnqueueAtOnce.value([newEvent(program.id, "wallet.created", at, { id: newId() })])).toBe(0)
        yield* drainQueue(webhooks)
      })
    )

    it.effect("never hands one due delivery to two concurrent claimers", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        const subscriptions = [subscription(program.id, ["card.created"]), subscription(program.id, ["card.created"])]
        for (const item of subscriptions) yield* webhooks.insertSubscription(item)
        const stored = yield* Effect.forEach(Array.from({ length: 15 }), () => storedEvent(program.id, "card.created"))
        expect(yield* webhooks.enqueueEvents(stored)).toBe(30)

        const now = iso(Date.now() + 1_000)
        const claimer = Effect.gen(function* () {
          const token = newId()
          const mine: Array<string> = []
          for (;;) {
            const claimed = yield* webhooks.claimDue(token, now, iso(Date.now() + 60_000), 4)
            if (claimed.length === 0) return mine
            mine.push(...claimed.map((delivery) => delivery.id))
          }
        })
        const claims = yield* Effect.all(
          Array.from({ length: 4 }, () => claimer),
          { concurrency: "unbounded" }
        )
        const everyClaim = claims.flat()
        expect(everyClaim).toHaveLength(30)
        expect(new Set(everyClaim).size).toBe(30)
        yield* drainQueue(webhooks)
      })
    )

    it.effect("a lease hides a claimed delivery until it ends; then another token claims it and the first can no longer complete it", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        const target = subscription(program.id, ["card.created"])
        yield* webhooks.insertSubscription(target)
        const t0 = Date.now()
        yield* webhooks.enqueueEvent(yield* storedEvent(program.id, "card.created", iso(t0)))

        const first = newId()
        const [claimed] = yield* webhooks.claimDue(first, iso(t0 + 1), iso(t0 + 60_000), 10)
        expect(claimed).toBeDefined()
        expect(yield* webhooks.claimDue(newId(), iso(t0 + 1), iso(t0 + 60_000), 10)).toEqual([])
        expect(yield* webhooks.claimDue(newId(), iso(t0 + 59_000), iso(t0 + 120_000), 10)).toEqual([])
        expect(yield* webhooks.nextDueAt).toEqual(Option.some(iso(t0 + 60_000)))

        // The lease ended (the first worker died, say): another worker claims it.
        const second = newId()
        const [again] = yield* webhooks.claimDue(second, iso(t0 + 60_000), iso(t0 + 120_000), 10)
        expect(again?.id).toBe(claimed!.id)
        // The first token's late completion does not remove what the second now holds.
        yield* webhooks.completeDeliveries(first, [claimed!.id])
        yield* webhooks.rescheduleDelivery(first, claimed!.id, 5, iso(t0))
        expect(yield* webhooks.nextDueAt).toEqual(Option.some(iso(t0 + 120_000)))
        yield* webhooks.completeDeliveries(second, [claimed!.id])
        expect(yield* webhooks.claimDue(newId(), FAR_FUTURE, FAR_FUTURE, 10)).toEqual([])
      })
    )

    it.effect("claims due deliveries and reports the next due time in one call", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        yield* webhooks.insertSubscription(subscription(program.id, ["card.created"]))
        const t0 = Date.now()
        yield* webhooks.enqueueEvent(yield* storedEvent(program.id, "card.created", iso(t0)))
        yield* webhooks.enqueueEvent(yield* storedEvent(program.id, "card.created", iso(t0 + 30_000)))

        const first = yield* webhooks.claimDueWithNext(newId(), iso(t0 + 1), iso(t0 + 60_000), 10)
        expect(first.claimed).toHaveLength(1)
        // The later delivery is not due yet: its due time is the next one.
        expect(first.nextDueAt).toEqual(Option.some(iso(t0 + 30_000)))
        const second = yield* webhooks.claimDueWithNext(newId(), iso(t0 + 30_001), iso(t0 + 90_000), 10)
        expect(second.claimed).toHaveLength(1)
        expect(second.claimed[0]!.id).not.toBe(first.claimed[0]!.id)
        // Now the first claim's lease end is the earliest time anything comes due again.
        expect(second.nextDueAt).toEqual(Option.some(iso(t0 + 60_000)))
        yield* drainQueue(webhooks)
      })
    )

    it.effect("renews the leases a token still holds, never one another worker took over", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        yield* webhooks.insertSubscription(subscription(program.id, ["card.created"]))
        const t0 = Date.now()
        yield* webhooks.enqueueEvents(
          yield* Effect.forEach(Array.from({ length: 2 }), () => storedEvent(program.id, "card.created", iso(t0)))
        )
        const token = newId()
        const [renewed, lost] = (yield* webhooks.claimDue(token, iso(t0), iso(t0 + 4_000), 10)).map((delivery) => delivery.id)
        // The lease of `lost` ends unrenewed and another worker takes it over until t0 + 9 s.
        const other = newId()
        expect((yield* webhooks.claimDue(other, iso(t0 + 4_000), iso(t0 + 9_000), 10)).map((d) => d.id).sort()).toEqual(
          [renewed, lost].sort()
        )
        yield* webhooks.releaseClaims(other, iso(t0 + 4_000), [lost!])
        yield* webhooks.claimDue(token, iso(t0 + 4_000), iso(t0 + 8_000), 10)
        // Renewed to t0 + 20 s: `renewed` is held until then; `lost` keeps its new holder's lease.
        expect(yield* webhooks.renewClaims(token, [renewed!, lost!], iso(t0 + 20_000))).toEqual([renewed])
        expect(yield* webhooks.claimDue(newId(), iso(t0 + 19_999), iso(t0 + 30_000), 10)).toMatchObject([{ id: lost }])
        expect((yield* webhooks.claimDue(newId(), iso(t0 + 20_000), iso(t0 + 30_000), 10)).map((d) => d.id)).toEqual([renewed])
        yield* drainQueue(webhooks)
      })
    )

    it.effect("reschedules a held delivery with its try count, and releases claims except those kept", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        const target = subscription(program.id, ["card.created"])
        yield* webhooks.insertSubscription(target)
        const t0 = Date.now()
        yield* webhooks.enqueueEvents(
          yield* Effect.forEach(Array.from({ length: 3 }), () => storedEvent(program.id, "card.created", iso(t0)))
        )
        const token = newId()
        const [retried, kept, released] = (yield* webhooks.claimDue(token, iso(t0), iso(t0 + 60_000), 10)).map((delivery) => delivery.id)
        expect(released).toBeDefined()

        yield* webhooks.rescheduleDelivery(token, retried!, 1, iso(t0 + 30_000))
        yield* webhooks.releaseClaims(token, iso(t0), [kept!])
        const other = newId()
        expect((yield* claimAll(webhooks, iso(t0), other)).map((delivery) => delivery.id)).toEqual([released])
        const [retry] = yield* claimAll(webhooks, iso(t0 + 30_000), other)
        expect(retry).toMatchObject({ id: retried, attempt_count: 1 })
        yield* webhooks.completeDeliveries(other, [released!, retried!])
        expect((yield* claimAll(webhooks, iso(t0 + 60_000))).map((delivery) => delivery.id)).toEqual([kept])
        yield* drainQueue(webhooks)
      })
    )

    it.effect("reschedules many held deliveries in one call, each with its own tries and due time, only those the token holds", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        yield* webhooks.insertSubscription(subscription(program.id, ["card.created"]))
        const t0 = Date.now()
        yield* webhooks.enqueueEvents(
          yield* Effect.forEach(Array.from({ length: 3 }), () => storedEvent(program.id, "card.created", iso(t0)))
        )
        const token = newId()
        const [soon, later, untouched] = (yield* webhooks.claimDue(token, iso(t0), iso(t0 + 600_000), 10)).map((delivery) => delivery.id)
        yield* webhooks.rescheduleDeliveries(token, [])
        // Another token's reschedule of a delivery it does not hold changes nothing.
        yield* webhooks.rescheduleDeliveries(newId(), [{ id: untouched!, attemptCount: 9, nextAttemptIso: iso(t0) }])
        yield* webhooks.rescheduleDeliveries(token, [
          { id: soon!, attemptCount: 2, nextAttemptIso: iso(t0 + 10_000) },
          { id: later!, attemptCount: 5, nextAttemptIso: iso(t0 + 20_000) }
        ])
        const other = newId()
        expect(yield* claimAll(webhooks, iso(t0 + 5_000), other)).toEqual([])
        expect((yield* claimAll(webhooks, iso(t0 + 10_000), other)).map((d) => [d.id, d.attempt_count])).toEqual([[soon, 2]])
        expect((yield* claimAll(webhooks, iso(t0 + 20_000), other)).map((d) => [d.id, d.attempt_count])).toEqual([[later, 5]])
        yield* drainQueue(webhooks)
      })
    )

    it.effect(
      "records a batch of finished tries — attempts once per id, the queue only where the token holds, streaks — in a transaction or at once",
      () =>
        Effect.gen(function* () {
          const webhooks = yield* WebhookStore
          const transactor = yield* Transactor
          const ways: Array<[string, (token: string, tries: FinishedTries) => Effect.Effect<void, unknown>]> = [
            ["in a transaction", (token, tries) => transactor.withTransaction(webhooks.recordTries(token, tries))]
          ]
          if (Option.isSome(webhooks.recordTriesAtOnce)) ways.push(["at once", webhooks.recordTriesAtOnce.value])
          for (const [way, recordTries] of ways) {
            const { program } = yield* freshOrganization
            yield* drainQueue(webhooks)
            const succeeding = subscription(program.id, ["card.created"])
            const failing = subscription(program.id, ["card.updated"])
            for (const item of [succeeding, failing]) yield* webhooks.insertSubscription(item)
            const t0 = Date.now()
            yield* webhooks.markFailing([succeeding.id], iso(t0))
            const events = [
              ...(yield* Effect.forEach(Array.from({ length: 3 }), () => storedEvent(program.id, "card.created", iso(t0)))),
              yield* storedEvent(program.id, "card.updated", iso(t0))
            ]
            yield* webhooks.enqueueEvents(events)
            const token = newId()
            const claimed = yield* webhooks.claimDue(token, iso(t0), iso(t0 + 600_000), 10)
            const byEvent = (event: IssuingEvent) => claimed.find((delivery) => delivery.event_id === event.id)!.id
            const [delivered, lost, untouched] = events.map(byEvent)
            // `lost`'s lease ended and another worker holds it now: this token's writes leave it alone.
            const thief = newId()
            yield* webhooks.rescheduleDelivery(token, lost!, 0, iso(t0))
            expect((yield* webhooks.claimDue(thief, iso(t0), iso(t0 + 600_000), 10)).map((d) => d.id)).toEqual([lost])
            const attempt = (event: IssuingEvent, subscriptionId: string, status: "SUCCESS" | "FAILED") => ({
              id: newId(),
              object: "webhook_attempt" as const,
              program_id: program.id,
              event_id: event.id,
              webhook_subscription_id: subscriptionId,
              status,
              response_code: status === "SUCCESS" ? 200 : 500,
              response_body: `${way} ${status}`,
              attempted_at: iso(t0),
              created_at: iso(t0),
              updated_at: iso(t0)
            })
            const tries: FinishedTries = {
              attempts: [
                attempt(events[0]!, succeeding.id, "SUCCESS"),
                attempt(events[1]!, succeeding.id, "SUCCESS"),
                attempt(events[3]!, failing.id, "FAILED")
              ],
              retries: [{ id: byEvent(events[3]!), attemptCount: 1, nextAttemptIso: iso(t0 + 30_000) }],
              finished: [delivered!, lost!],
              clearFailing: [succeeding.id],
              markFailing: [failing.id],
              nowIso: iso(t0)
            }
            yield* recordTries(token, tries)
            // Recorded again (a commit that may have gone through): nothing doubles.
            yield* recordTries(token, tries)
            const listed = yield* webhooks.listAttempts(program.id, {}, newestFirst())
            expect(listed.total).toBe(3)
            expect(sorted(listed.rows.map((row) => row.id))).toEqual(sorted(tries.attempts.map((a) => a.id)))
            expect(listed.rows.find((row) => row.status === "FAILED")).toMatchObject({ response_code: 500, response_body: `${way} FAILED` })
            // `delivered` is gone, `lost` still the thief's, `untouched` (the third card.created)
            // and still held, the failed one due again at its time with its try counted.
            expect(yield* webhooks.renewClaims(thief, [lost!], iso(t0 + 600_000))).toEqual([lost])
            expect(sorted(yield* webhooks.renewClaims(token, [delivered!, untouched!], iso(t0 + 600_000)))).toEqual([untouched])
            expect(yield* claimAll(webhooks, iso(t0 + 29_000))).toEqual([])
            expect((yield* claimAll(webhooks, iso(t0 + 30_000))).map((d) => [d.event_id, d.attempt_count])).toEqual([[events[3]!.id, 1]])
            // The streaks: the success ended `succeeding`'s, the failure started `failing`'s.
            expect(yield* webhooks.disableSubscriptions([succeeding.id, failing.id], iso(t0), FAR_FUTURE)).toEqual([failing.id])
            // Nothing to record is nothing written.
            yield* recordTries(token, { attempts: [], retries: [], finished: [], clearFailing: [], markFailing: [], nowIso: iso(t0) })
            expect((yield* webhooks.listAttempts(program.id, {}, newestFirst())).total).toBe(3)
            yield* drainQueue(webhooks)
          }
        })
    )

    it.effect("queues a single delivery (a resend's retry) only for an enabled subscription that still exists", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        const enabled = subscription(program.id, ["card.created"])
        const disabled = subscription(program.id, ["card.created"], { disabled: true })
        for (const item of [enabled, disabled]) yield* webhooks.insertSubscription(item)
        const event = yield* storedEvent(program.id, "card.created")
        const due = iso(Date.now() + 5_000)
        for (const subscriptionId of [enabled.id, disabled.id, newId()]) {
          yield* webhooks.enqueue({
            program_id: program.id,
            subscription_id: subscriptionId,
            event_id: event.id,
            attempt_count: 2,
            next_attempt_at: due
          })
        }
        expect(yield* webhooks.nextDueAt).toEqual(Option.some(due))
        const claimed = yield* claimAll(webhooks, due)
        expect(claimed.map((delivery) => [delivery.subscription_id, delivery.attempt_count])).toEqual([[enabled.id, 2]])
        yield* drainQueue(webhooks)
      })
    )

    it.effect("replays the window's events of the subscription's types, both ends inclusive, and counts them", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        yield* drainQueue(webhooks)
        const target = subscription(program.id, ["card.created", "card.updated"])
        const bystander = subscription(program.id, ["card.created"])
        for (const item of [target, bystander]) yield* webhooks.insertSubscription(item)
        const t = Date.now() - 60_000
        const inside = [
          yield* storedEvent(program.id, "card.created", iso(t)),
          yield* storedEvent(program.id, "card.updated", iso(t + 500)),
          yield* storedEvent(program.id, "card.created", iso(t + 1_000))
        ]
        yield* storedEvent(program.id, "card.created", iso(t - 1))
        yield* storedEvent(program.id, "card.created", iso(t + 1_001))
        yield* storedEvent(program.id, "wallet.created", iso(t + 500))
        yield* storedEvent(other.program.id, "card.created", iso(t + 500))

        const now = new Date().toISOString()
        expect(yield* webhooks.enqueueReplay(program.id, target.id, null, iso(t), iso(t + 1_000), now)).toBe(3)
        const claimed = yield* claimAll(webhooks, now)
        expect(pairs(claimed)).toEqual(pairs(inside.map((event) => ({ event_id: event.id, subscription_id: target.id }))))
        // Delivered or not, a replay queues them again.
        expect(yield* webhooks.enqueueReplay(program.id, target.id, null, iso(t), iso(t + 1_000), now)).toBe(3)
        expect(yield* webhooks.enqueueReplay(program.id, target.id, null, iso(t + 2_000), iso(t + 3_000), now)).toBe(0)
        expect(yield* claimAll(webhooks, now)).toHaveLength(3)
        yield* drainQueue(webhooks)
      })
    )

    it.effect("spans the program's events of a window: its first and last created_at, or none", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const t = Date.now() - 60_000
        yield* storedEvent(program.id, "card.created", iso(t))
        yield* storedEvent(program.id, "wallet.created", iso(t + 700))
        yield* storedEvent(program.id, "card.updated", iso(t + 1_000))
        yield* storedEvent(other.program.id, "card.created", iso(t - 5_000))
        yield* storedEvent(other.program.id, "card.created", iso(t + 5_000))

        expect(yield* webhooks.eventSpan(program.id, null, iso(t - 10_000), iso(t + 10_000))).toEqual(
          Option.some({ first: iso(t), last: iso(t + 1_000) })
        )
        expect(yield* webhooks.eventSpan(program.id, null, iso(t + 1), iso(t + 1_000))).toEqual(
          Option.some({ first: iso(t + 700), last: iso(t + 1_000) })
        )
        expect(yield* webhooks.eventSpan(program.id, null, iso(t + 1), iso(t + 699))).toEqual(Option.none())
      })
    )

    // A replay naming program A and a subscription of program B must queue nothing (the service
    // checks first too; the store does not rely on it).
    it.effect("a replay queues nothing for a subscription of another program", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        yield* drainQueue(webhooks)
        const foreign = subscription(other.program.id, ["card.created"])
        yield* webhooks.insertSubscription(foreign)
        const event = yield* storedEvent(program.id, "card.created")
        const queued = yield* webhooks.enqueueReplay(
          program.id,
          foreign.id,
          null,
          event.created_at,
          event.created_at,
          new Date().toISOString()
        )
        yield* drainQueue(webhooks)
        expect(queued).toBe(0)
      })
    )

    it.effect("tracks failing streaks and disables subscriptions failing too long, dropping their queue", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        const failing = subscription(program.id, ["card.created"])
        const recovered = subscription(program.id, ["card.created"])
        const healthy = subscription(program.id, ["card.created"])
        for (const item of [failing, recovered, healthy]) yield* webhooks.insertSubscription(item)
        yield* webhooks.enqueueEvent(yield* storedEvent(program.id, "card.created"))
        const t0 = Date.now()

        yield* webhooks.markFailing([failing.id, recovered.id], iso(t0))
        // A running streak keeps its start.
        yield* webhooks.markFailing([failing.id], iso(t0 + 10_000))
        yield* webhooks.clearFailing([recovered.id])
        yield* webhooks.markFailing([], iso(t0))
        yield* webhooks.clearFailing([])

        const now = iso(t0 + 20_000)
        expect(yield* webhooks.disableSubscriptions([failing.id, recovered.id, healthy.id], now, iso(t0 + 1))).toEqual([failing.id])
        expect(Option.getOrThrow(yield* webhooks.findSubscription(program.id, failing.id))).toMatchObject({
          disabled: true,
          updated_at: now
        })
        expect(Option.getOrThrow(yield* webhooks.findSubscription(program.id, recovered.id)).disabled).toBe(false)
        expect(
          pairs(yield* claimAll(webhooks, FAR_FUTURE))
            .map((pair) => pair.split(" → ")[1])
            .sort()
        ).toEqual(sorted([recovered.id, healthy.id]))

        // Without a cutoff every enabled one is disabled; an already disabled one is not reported again.
        expect(sorted(yield* webhooks.disableSubscriptions([failing.id, healthy.id], now, undefined))).toEqual([healthy.id])
        expect(yield* webhooks.disableSubscriptions([], now, undefined)).toEqual([])

        // Enabling again ends the streak: it is not disabled for failures from before.
        const enabled = { ...Option.getOrThrow(yield* webhooks.findSubscription(program.id, failing.id)), disabled: false }
        yield* webhooks.updateSubscription(enabled)
        expect(yield* webhooks.disableSubscriptions([failing.id], now, FAR_FUTURE)).toEqual([])
        yield* drainQueue(webhooks)
      })
    )

    it.effect("drops the queued deliveries of the given subscriptions only", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        yield* drainQueue(webhooks)
        const dropped = subscription(program.id, ["card.created"])
        const kept = subscription(program.id, ["card.created"])
        for (const item of [dropped, kept]) yield* webhooks.insertSubscription(item)
        yield* webhooks.enqueueEvent(yield* storedEvent(program.id, "card.created"))
        yield* webhooks.dropQueued([])
        yield* webhooks.dropQueued([dropped.id])
        expect((yield* claimAll(webhooks, FAR_FUTURE)).map((delivery) => delivery.subscription_id)).toEqual([kept.id])
        yield* drainQueue(webhooks)
      })
    )

    it.effect("finds subscriptions sealed under other vault keys and re-seals them compare-and-set", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        const current = `k${newId().replaceAll("-", "")}`
        const old = `k${newId().replaceAll("-", "")}`
        const stale = subscription(program.id, ["card.created"], { secret_sealed: `v1.${old}.a` })
        const stalePrevious = subscription(program.id, ["card.created"], {
          secret_sealed: `v1.${current}.b`,
          previous_secret_sealed: `v1.${old}.c`,
          previous_secret_expires_at: iso(Date.now() + 60_000)
        })
        const fresh = subscription(program.id, ["card.created"], { secret_sealed: `v1.${current}.d` })
        for (const item of [stale, stalePrevious, fresh]) yield* webhooks.insertSubscription(item)
        const mine = new Set([stale.id, stalePrevious.id, fresh.id])
        const found = (yield* webhooks.subscriptionsSealedWithOtherKeys(current, 10_000)).filter((row) => mine.has(row.id))
        expect(found.map((row) => row.id)).toEqual(sorted([stale.id, stalePrevious.id]))
        expect(yield* webhooks.subscriptionsSealedWithOtherKeys(current, 1)).toHaveLength(1)

        const expected = { secret_sealed: stale.secret_sealed, previous_secret_sealed: null, previous_secret_expires_at: null }
        const next = { secret_sealed: `v1.${current}.a2`, previous_secret_sealed: null, previous_secret_expires_at: null }
        expect(yield* webhooks.resealSubscription(stale.id, { ...expected, secret_sealed: "v1.other.rotated" }, next)).toBe(false)
        expect(yield* webhooks.resealSubscription(stale.id, expected, next)).toBe(true)
        expect(yield* webhooks.resealSubscription(stale.id, expected, next)).toBe(false)
        expect(Option.getOrThrow(yield* webhooks.findSubscription(program.id, stale.id))).toEqual({ ...stale, ...next })
      })
    )

    it.effect("records attempts and lists them within the program, filtered, newest first with ties on id", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        const { program } = yield* freshOrganization
        const other = yield* freshOrganization
        const [s1, s2] = [newId(), newId()]
        const [e1, e2] = [newId(), newId()]
        const at = new Date().toISOString()
        const attempts: Array<WebhookAttempt & { readonly program_id: string }> = Array.from({ length: 6 }, (_, index) => ({
          id: newId(),
          object: "webhook_attempt",
          program_id: program.id,
          event_id: index % 2 === 0 ? e1 : e2,
          webhook_subscription_id: index < 3 ? s1 : s2,
          status: index % 3 === 0 ? "FAILED" : "SUCCESS",
          response_code: index % 3 === 0 ? 503 : 200,
          response_body: `body ${index}`,
          attempted_at: at,
          created_at: at,
          updated_at: at
        }))
        yield* webhooks.insertAttempts([])
        yield* webhooks.insertAttempts([...attempts].reverse())
        const strip = ({ program_id: _, ...attempt }: WebhookAttempt & { readonly program_id: string }): WebhookAttempt => attempt

        const all = yield* webhooks.listAttempts(program.id, {}, newestFirst())
        expect(all.total).toBe(6)
        expect(all.rows).toEqual([...attempts].sort((a, b) => (a.id < b.id ? 1 : -1)).map(strip))
        const byEvent = yield* webhooks.listAttempts(program.id, { event_id: e1 }, newestFirst())
        expect(sorted(byEvent.rows.map((row) => row.id))).toEqual(sorted(attempts.filter((a) => a.event_id === e1).map((a) => a.id)))
        const combined = yield* webhooks.listAttempts(program.id, { webhook_subscription_id: s2, status: "FAILED" }, newestFirst())
        expect(combined.rows.map((row) => row.id)).toEqual([attempts[3]!.id])
        const page = yield* webhooks.listAttempts(program.id, { status: "SUCCESS" }, newestFirst(2, 2))
        expect(page.total).toBe(4)
        expect(page.rows).toHaveLength(2)
        expect((yield* webhooks.listAttempts(other.program.id, {}, newestFirst())).total).toBe(0)
        expect((yield* webhooks.listAttempts(other.program.id, { event_id: e1 }, newestFirst())).total).toBe(0)
      })
    )

    it.effect("wakes waiting workers, and a wait without a wake-up ends after its time", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookStore
        // A pending wake-up (rung before anyone waited) is not lost.
        yield* webhooks.wake
        yield* webhooks.waitForWork(60_000).pipe(Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => "pending wake lost" }))
        // A waiter parked in its wait (not one that finds a pending wake-up) is woken.
        const waiting = yield* Effect.fork(webhooks.waitForWork(60_000))
        yield* awaitSuspended(waiting)
        yield* webhooks.wake
        yield* Fiber.join(waiting).pipe(Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => "wake not delivered" }))
        yield* webhooks.waitForWork(20).pipe(Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => "wait did not end" }))
      })
    )
  })
