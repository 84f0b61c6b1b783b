import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { uuid } from "../support/platform.js"
import { startDeliveries, type DeliveryFixture } from "../webhooks/deliveries.js"
import type { Received } from "../webhooks/receiver.js"
import { checkInvariants, InvariantViolation, openStoreReader, type ReceiverLog, TransferLog } from "./invariants.js"

/**
 * The fault suite's invariant check on a calm run passes, and finds each kind of damage it is
 * there to find: a balance that no longer matches its entries, an acknowledged transfer that does
 * not exist, a refused one that does, and a try the receiver saw with no attempt recorded.
 */
describe.each(STORE_KINDS)("the invariant check on %s", (kind) => {
  let fixture: DeliveryFixture
  const log = new TransferLog()
  let receivers: Array<ReceiverLog>
  let accounts: { a: string; b: string }

  beforeAll(async () => {
    fixture = await startDeliveries(kind, { webhookRetryScheduleMs: [100, 100, 100] })
    const { platform, receiver } = fixture
    const subscription = await platform.request("POST", "/v1/webhook-subscriptions", {
      body: { url: receiver.url, event_types: ["transfer.created", "transfer.settled"] }
    })
    expect(subscription.status, subscription.text).toBe(200)
    const statuses = new WeakMap<Received, number>()
    // The first try of each event fails, so retries are part of what is checked.
    const seen = new Set<string>()
    receiver.reply = (request) => {
      const status = seen.has(request.id) ? 200 : 503
      seen.add(request.id)
      statuses.set(request, status)
      return { status }
    }
    receivers = [
      {
        subscriptionId: subscription.body.id,
        get tries() {
          return receiver.received.map((r) => ({ eventId: r.id, atMs: r.receivedAtMs, status: statuses.get(r) }))
        }
      }
    ]
    const wallet = async () => {
      const response = await platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada" } } })
      return response.body.financial_account_id as string
    }
    accounts = { a: await wallet(), b: await wallet() }
    const post = async (body: Record<string, unknown>, idempotencyKey?: string) => {
      const entry = { tag: `check-${uuid()}`, idempotencyKey, request: body as any }
      const response = await platform.request("POST", "/v1/transfers", {
        body: { ...body, description: entry.tag },
        ...(idempotencyKey === undefined ? {} : { idempotencyKey })
      })
      log.answered(entry, response.status, response.body)
    }
    await post({ payment_rail: "fednow_instant", amount: 500, currency: "USD", to_financial_account_id: accounts.a })
    await post(
      { payment_rail: "book", amount: 200, currency: "USD", from_financial_account_id: accounts.a, to_financial_account_id: accounts.b },
      uuid()
    )
    await post({ payment_rail: "ach_same_day", amount: 100, currency: "USD", from_financial_account_id: accounts.b })
    await post({
      payment_rail: "book",
      amount: 9_999,
      currency: "USD",
      from_financial_account_id: accounts.a,
      to_financial_account_id: accounts.b
    })
  })
  afterAll(async () => {
    await fixture?.stop()
  })

  const options = () => ({
    store: fixture.platform.database,
    baseUrl: fixture.platform.baseUrl,
    apiKey: fixture.platform.org.api_key,
    programId: fixture.platform.org.program_id,
    transfers: log,
    receivers,
    settleTimeoutMs: 20_000
  })

  it("passes on a calm run and counts what it checked", async () => {
    const report = await checkInvariants(options())
    expect(report).toMatchObject({ currencies: 1, transfers: 3, acknowledged: 3, refused: 1, failed: 0 })
    // Three transfer.created and the book transfer's transfer.settled (FedNow emits
    // transfer.settled.instant, the ACH stays pending), each tried twice.
    expect(report.deliveries).toBe(4)
    expect(report.attempts).toBe(8)
    expect(report.receivedTries).toBe(8)
  })

  it("finds an acknowledged transfer missing, a refused one present, and a try without its attempt", async () => {
    const forged = new TransferLog()
    for (const entry of log.entries) forged.record(entry)
    const [acknowledged, , , refused] = log.entries
    // Told "refused" although it exists; told "acknowledged" for a transfer that was never made.
    forged.record({ ...acknowledged!, outcome: { kind: "refused", status: 422, code: "insufficient_funds" } })
    forged.record({ ...refused!, outcome: { kind: "acknowledged", status: 200, body: { id: uuid(), status: "SETTLED" } } })
    const extraTry = { eventId: receivers[0]!.tries[0]!.eventId, atMs: Date.now(), status: 200 }
    const error = await checkInvariants({
      ...options(),
      transfers: forged,
      receivers: [{ subscriptionId: receivers[0]!.subscriptionId, tries: [...receivers[0]!.tries, extraTry] }]
    }).catch((e) => e)
    expect(error).toBeInstanceOf(InvariantViolation)
    const text = (error as InvariantViolation).findings.join("\n")
    expect(text).toMatch(/was answered 422 insufficient_funds but transfer .* exists/)
    expect(text).toMatch(/was acknowledged \(200, transfer .*\) but no transfer exists/)
    expect(text).toMatch(/the receiver saw 3 tries, 2 attempts are recorded/)
    // A try cut off by a crash of the sender is excused.
    const excused = await checkInvariants({
      ...options(),
      receivers: [{ subscriptionId: receivers[0]!.subscriptionId, tries: [...receivers[0]!.tries, extraTry] }],
      interruptionsMs: [extraTry.atMs + 1]
    })
    expect(excused.triesCutOff).toBe(1)
  })

  it("finds a balance that does not match its entries", async () => {
    const db = await openStoreReader(fixture.platform.database)
    try {
      await db.query(
        `UPDATE issuing_balances SET credits_minor = credits_minor + 1 WHERE financial_account_id = '${accounts.b}' AND book = 'principal'`
      )
      const error = await checkInvariants(options()).catch((e) => e)
      expect(error).toBeInstanceOf(InvariantViolation)
      const text = (error as InvariantViolation).findings.join("\n")
      expect(text).toMatch(/balances in USD: debits \d+ != credits \d+/)
      expect(text).toContain(`balance of ${accounts.b}/principal`)
    } finally {
      await db.query(
        `UPDATE issuing_balances SET credits_minor = credits_minor - 1 WHERE financial_account_id = '${accounts.b}' AND book = 'principal'`
      )
      await db.close()
    }
  })
})
