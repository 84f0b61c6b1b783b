import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CLAIM_ABANDON_MS, CLAIM_START_WITHIN_MS } from "../src/platform/Leases.js"
import { DeliveryDispatch, SigningKeyCache } from "../src/webhooks/DeliveryDispatch.js"
import { type ClaimedDelivery, WEBHOOK_LIMITS } from "../src/webhooks/Records.js"
import type { VaultService } from "../src/vault/Vault.js"
import type { DeliveryOutcome, OutgoingDelivery, WebhookSenderService } from "../src/webhooks/WebhookSender.js"

const TIMEOUT_MS = 1000

const delivery = (id: string): ClaimedDelivery => ({
  id,
  program_id: "p",
  subscription_id: "s",
  event_id: `event-${id}`,
  attempt_count: 0,
  event_type: "transaction.updated",
  event_created_at: "2026-05-02T12:00:00.000Z",
  event_data: "{}",
  url: "http://127.0.0.1:1/hooks",
  disabled: false,
  secret_sealed: "sealed",
  previous_secret_sealed: null,
  previous_secret_expires_at: null,
  subscription_updated_at: "2026-05-02T12:00:00.000Z"
})

const ok: DeliveryOutcome = { status: "SUCCESS", responseCode: 200, responseBody: "ok", retryAfterMs: undefined, attemptedAtMs: 0 }

/**
 * A sender whose tries end when the test says: `sent` lists every try started, `answer` ends the
 * oldest open ones; an aborted try ends at once, failed, as the real sender's does.
 */
const controlledSender = () => {
  const sent: Array<string> = []
  const open: Array<() => void> = []
  const sender: WebhookSenderService = {
    send: () => Effect.die("unused"),
    sendAsync: (outgoing: OutgoingDelivery) =>
      new Promise((resolve) => {
        sent.push(outgoing.messageId)
        open.push(() => resolve(ok))
        outgoing.signal?.addEventListener("abort", () =>
          resolve({ ...ok, status: "FAILED", responseCode: 0, responseBody: `abandoned: ${String(outgoing.signal?.reason)}` })
        )
      })
  }
  return {
    sender,
    sent,
    answer: async (count = open.length) => {
      for (const settle of open.splice(0, count)) settle()
      await new Promise((resolve) => setTimeout(resolve, 0))
    }
  }
}

const vault = { decrypt: () => `whsec_${Buffer.alloc(32, 1).toString("base64")}` } as unknown as VaultService

const dispatchOf = (sender: WebhookSenderService, concurrency: number) =>
  new DeliveryDispatch(sender, new SigningKeyCache(vault), { concurrency, timeoutMs: TIMEOUT_MS, maxPayloadBytes: 256 * 1024 })

/**
 * Regressions found by the receiver-chaos test (test/faults/chaos.test.ts) at 10,000 events on
 * PostgreSQL: the recorder fell tens of seconds behind the sends, leases ended before results were
 * recorded, and a late result rescheduled a delivery that this worker had claimed again and was
 * sending, so the delivery was sent twice at once.
 */
describe("DeliveryDispatch", () => {
  it("ignores a new claim of a delivery whose result is not recorded yet; takes it once recorded", async () => {
    const { answer, sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, 4)
    dispatch.add([delivery("a")])
    expect(sent).toEqual(["event-a"])
    // Claimed again while running: not sent again.
    dispatch.add([delivery("a")])
    expect(sent).toEqual(["event-a"])
    await answer()
    // Finished but not recorded: still not sent again.
    dispatch.add([delivery("a")])
    expect(sent).toEqual(["event-a"])
    const batch = dispatch.takeResults()
    expect(batch.map((finished) => finished.delivery.id)).toEqual(["a"])
    dispatch.recorded(batch)
    dispatch.add([delivery("a")])
    expect(sent).toEqual(["event-a", "event-a"])
  })

  it("keeps a retry claimed again after its recording when the recorded batch is let go twice", async () => {
    const { answer, sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, 4)
    dispatch.add([delivery("a")])
    await answer()
    const batch = dispatch.takeResults()
    // The try is recorded, then the claim loop claims the delivery again (a retry already due).
    dispatch.recorded(batch)
    const reclaimedMs = Date.now()
    dispatch.add([delivery("a")], reclaimedMs)
    expect(sent).toEqual(["event-a", "event-a"])
    // The recorder's final release of the same batch leaves the new claim held, renewed and unjudged.
    dispatch.recorded(batch)
    expect(dispatch.heldIds).toEqual(["a"])
    expect(dispatch.abandonUnconfirmed(reclaimedMs + CLAIM_ABANDON_MS)).toBe(0)
    // A claim of the held delivery under this worker's token confirms its lease; it starts nothing.
    dispatch.add([delivery("a")], reclaimedMs + 1000)
    expect(sent).toEqual(["event-a", "event-a"])
    expect(dispatch.abandonUnconfirmed(reclaimedMs + 1000 + CLAIM_ABANDON_MS)).toBe(0)
    expect(dispatch.abandonUnconfirmed(reclaimedMs + 1000 + CLAIM_ABANDON_MS + 1)).toBe(1)
  })

  it("takes a retry claimed after its recording committed but before the recorder let go of the try, once let go", async () => {
    const { answer, sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, 4)
    dispatch.add([delivery("a")])
    await answer()
    const batch = dispatch.takeResults()
    // The recording rescheduled it due at once with its try counted; the claim loop claimed it
    // before the recorder's continuation ran: held, so not started yet.
    const retry = { ...delivery("a"), attempt_count: 1 }
    const reclaimedMs = Date.now()
    dispatch.add([retry], reclaimedMs)
    expect(sent).toEqual(["event-a"])
    dispatch.recorded(batch)
    expect(sent).toEqual(["event-a", "event-a"])
    expect(dispatch.heldIds).toEqual(["a"])
    // Let go of twice: the new claim stays held and is not started again.
    dispatch.recorded(batch)
    expect(dispatch.heldIds).toEqual(["a"])
    expect(sent).toEqual(["event-a", "event-a"])
    expect(dispatch.abandonUnconfirmed(reclaimedMs + CLAIM_ABANDON_MS)).toBe(0)
  })

  it("never takes a claim of the same try again (its lease ended before the recording): the recording answers for it", async () => {
    const { answer, sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, 4)
    dispatch.add([delivery("a")])
    await answer()
    const batch = dispatch.takeResults()
    // Claimed again with the same try count: the claim saw the row before the recording, which
    // (under the same token) completes or reschedules it.
    dispatch.add([delivery("a")])
    dispatch.recorded(batch)
    expect(sent).toEqual(["event-a"])
    expect(dispatch.heldIds).toEqual([])
  })

  it("claims and starts nothing while a record batch's worth of results waits for the recorder", async () => {
    const size = WEBHOOK_LIMITS.recordBatchSize
    const { answer, sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, size + 10)
    dispatch.add(Array.from({ length: size }, (_, i) => delivery(`d${i}`)))
    expect(sent).toHaveLength(size)
    expect(dispatch.wanted).toBeGreaterThan(0)
    await answer()
    // A full batch waits: nothing more is wanted or started.
    expect(dispatch.wanted).toBe(0)
    dispatch.add([delivery("late")])
    expect(sent).toHaveLength(size)
    // The recorder takes the batch: the buffered delivery starts and claims resume.
    dispatch.recorded(dispatch.takeResults())
    expect(sent).toHaveLength(size + 1)
    expect(dispatch.wanted).toBeGreaterThan(0)
  })

  it("claims two slots' worth at a time once a slot's worth is left buffered, holding at most four", async () => {
    const { answer, sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, 4)
    // Idle: enough for every slot and three slots' worth buffered.
    expect(dispatch.wanted).toBe(16)
    dispatch.add(Array.from({ length: 16 }, (_, i) => delivery(`d${i}`)))
    expect(sent).toHaveLength(4)
    // Twelve buffered: more than a slot's worth, so nothing is claimed yet.
    expect(dispatch.wanted).toBe(0)
    for (let ended = 0; ended < 8; ended++) {
      expect(dispatch.wanted).toBe(0)
      await answer(1)
    }
    // Four left buffered (a slot's worth) while the next claim is made: it takes two slots' worth.
    expect(sent).toHaveLength(12)
    expect(dispatch.wanted).toBe(8)
  })

  it("releases unsent a delivery whose claim was confirmed too long ago to start it", async () => {
    const { sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, 4)
    // The claim (the start of its lease) was made long before the claimed rows came back.
    dispatch.add([delivery("stale")], Date.now() - CLAIM_START_WITHIN_MS - 1)
    expect(sent).toEqual([])
    const [released] = dispatch.takeResults()
    expect(released).toMatchObject({ delivery: { id: "stale" }, outcome: undefined, released: true })
  })

  it("starts a buffered delivery whose claim the heartbeat renewed, and releases one it did not", async () => {
    for (const renew of [true, false]) {
      const { answer, sender, sent } = controlledSender()
      const dispatch = dispatchOf(sender, 1)
      dispatch.add([delivery("a"), delivery("b")], Date.now() - CLAIM_START_WITHIN_MS + 100)
      expect(sent).toEqual(["event-a"])
      expect(dispatch.heldIds).toEqual(["a", "b"])
      if (renew) dispatch.renewed(dispatch.heldIds, Date.now())
      // "a" ends once "b"'s claim, unrenewed, is too old to start under.
      await new Promise((resolve) => setTimeout(resolve, 150))
      await answer()
      if (renew) {
        expect(sent).toEqual(["event-a", "event-b"])
      } else {
        expect(sent).toEqual(["event-a"])
        expect(dispatch.takeResults()).toMatchObject([{ delivery: { id: "a" } }, { delivery: { id: "b" }, released: true }])
      }
    }
  })

  it("abandons a running try whose claim was not renewed, and only that one", async () => {
    const { answer, sender, sent } = controlledSender()
    const dispatch = dispatchOf(sender, 4)
    const claimedMs = Date.now()
    dispatch.add([delivery("kept"), delivery("lost")], claimedMs)
    expect(sent).toEqual(["event-kept", "event-lost"])
    dispatch.renewed(["kept"], claimedMs + CLAIM_ABANDON_MS)
    expect(dispatch.abandonUnconfirmed(claimedMs + CLAIM_ABANDON_MS)).toBe(0)
    expect(dispatch.abandonUnconfirmed(claimedMs + CLAIM_ABANDON_MS + 1)).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 0))
    const [lost] = dispatch.takeResults()
    expect(lost).toMatchObject({ delivery: { id: "lost" }, outcome: { status: "FAILED", responseCode: 0 } })
    expect(lost?.outcome?.responseBody).toMatch(/^abandoned: the claim on the delivery could not be renewed/)
    expect(dispatch.runningIds).toEqual(["kept"])
    await answer()
    expect(dispatch.takeResults()).toMatchObject([{ delivery: { id: "kept" }, outcome: { status: "SUCCESS" } }])
  })
})
