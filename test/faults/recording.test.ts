import pg from "pg"
import { afterAll, describe, expect, inject, it } from "vitest"
import { queueDrained } from "../support/queue.js"
import { type DeliveryFixture, startDeliveries } from "../webhooks/deliveries.js"
import { checkInvariants, TransferLog } from "./invariants.js"
import { sleep } from "./scenario.js"

/**
 * Regression test (found by the fault suite's database scenarios): a try whose attempt could not be
 * recorded because PostgreSQL went away right after it was made used to be lost — the recorder
 * gave up at once when the dead connection's rollback failed (a defect) and after 3 s otherwise,
 * so the delivery was sent again after its lease with no attempt for the first try. Now the
 * recorder keeps trying (up to 30 s): one try, one attempt.
 */
describe("recording an attempt while PostgreSQL is away", () => {
  let fixture: DeliveryFixture | undefined
  afterAll(async () => {
    await fixture?.stop()
  })

  it("records the try once the database is back, and does not send it again", async () => {
    fixture = await startDeliveries("postgres", { webhookRetryScheduleMs: [200], webhookTimeoutMs: 300 })
    const { platform, receiver } = fixture
    const database = new URL(platform.database.url).pathname.slice(1)
    const admin = new pg.Client({ connectionString: inject("pgAdminUrl") })
    await admin.connect()
    let outage: Promise<void> | undefined
    // The receiver answers at once, then every connection to the database is cut for 4 s: the
    // worker's recording of this try meets dead connections and a refusing server.
    receiver.reply = () => {
      outage ??= (async () => {
        const until = Date.now() + 4_000
        while (Date.now() < until) {
          await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [
            database
          ])
          await sleep(20)
        }
      })()
      return { status: 200, body: "ok" }
    }
    try {
      const subscription = await platform.request("POST", "/v1/webhook-subscriptions", {
        body: { url: receiver.url, event_types: ["wallet.created"] }
      })
      expect(subscription.status, subscription.text).toBe(200)
      const wallet = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })
      expect(wallet.status, wallet.text).toBe(200)
      await receiver.waitFor((all) => all.length > 0)
      await outage
      // The delivery leaves the queue only when a try of it is recorded: a try left without its
      // attempt would stay queued until its lease ends (2 × 300 ms + 5 s from the claim) and be
      // sent again before it left, so once the queue is empty the receiver's count is final.
      await queueDrained(platform.database)
      const report = await checkInvariants({
        store: platform.database,
        baseUrl: platform.baseUrl,
        apiKey: platform.org.api_key,
        programId: platform.org.program_id,
        transfers: new TransferLog(),
        receivers: [
          {
            subscriptionId: subscription.body.id,
            tries: receiver.received.map((request) => ({ eventId: request.id, atMs: request.receivedAtMs, status: 200 }))
          }
        ]
      })
      expect(receiver.received.length).toBe(1)
      expect(report).toMatchObject({ deliveries: 1, attempts: 1, receivedTries: 1 })
    } finally {
      await admin.end()
    }
  })
})
