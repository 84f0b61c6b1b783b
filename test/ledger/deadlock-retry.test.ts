import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { blockedBy, withLockClients } from "../support/locks.js"
import { startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { balanceOf, createWallet, expectBooksBalance, fund } from "./support.js"

/**
 * A request with an Idempotency-Key runs in one transaction with its stored response, so the
 * transfer's own writes join it and do not retry on their own (docs/api.md#idempotency). A
 * deadlock those writes lose must still run the request again, as one without a key would be:
 * never a 500. Found in CI: one of 200 concurrent idempotent transfers answered 500.
 *
 * The deadlock is made on purpose: a client of the test holds the later of the two accounts'
 * balance rows, the transfer locks the earlier one and waits for it, and the client then asks for
 * the earlier one. PostgreSQL's deadlock check runs first in the backend that has waited longest,
 * the transfer's, and ends its transaction (40P01).
 */
describe("a deadlock inside an idempotent transfer on postgres", () => {
  let platform: TestPlatform

  beforeAll(async () => {
    platform = await startPlatform("postgres")
  }, 60_000)
  afterAll(async () => {
    await platform?.close()
  })

  it("is retried: the transfer answers 200 and posts once", async () => {
    const source = await createWallet(platform, "Source")
    const target = await createWallet(platform, "Target")
    await fund(platform, source.financial_account_id, 100)
    const [earlier, later] = [source.financial_account_id, target.financial_account_id].sort()
    const body = {
      paymentRail: "book",
      amount: 30,
      currency: "USD",
      from_financial_account_id: source.financial_account_id,
      to_financial_account_id: target.financial_account_id
    }

    await withLockClients(platform.database.url, async ({ blocker, watcher }) => {
      // PostgreSQL counts the deadlocks it ended per database (its statistics reach the view
      // once the backend that found one reports them, within a second or so of its transaction).
      const deadlocks = async () =>
        Number((await watcher.query("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")).rows[0].deadlocks)
      const deadlocksBefore = await deadlocks()
      await blocker.query("BEGIN")
      await blocker.query("SELECT 1 FROM issuing_balances WHERE financial_account_id = $1 FOR UPDATE", [later])
      const blockerPid = (await blocker.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number
      const key = uuid()
      const transferring = platform.request("POST", "/v1/transfers", { idempotencyKey: key, body })
      // The transfer holds the earlier account's rows and waits for the later one's.
      await blockedBy(watcher, blockerPid, "the transfer")
      // Closing the cycle: this waits until PostgreSQL ends the transfer's transaction.
      await blocker.query("SELECT 1 FROM issuing_balances WHERE financial_account_id = $1 FOR UPDATE", [earlier])
      await blocker.query("ROLLBACK")

      const response = await transferring
      expect(response.status, response.text).toBe(200)
      expect(response.body.amount).toBe(30)
      // There was a deadlock, and the transfer's transaction is the one PostgreSQL ended (the
      // blocker's statements went through): the 200 is the retry's.
      await expect.poll(deadlocks, { interval: 100, timeout: 15_000 }).toBeGreaterThan(deadlocksBefore)
      // The retry with the same key gets the stored response: the request ran to its end once.
      const again = await platform.request("POST", "/v1/transfers", { idempotencyKey: key, body })
      expect(again.status, again.text).toBe(200)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body.id).toBe(response.body.id)
    })
    expect(await balanceOf(platform, source.financial_account_id)).toBe(70)
    expect(await balanceOf(platform, target.financial_account_id)).toBe(30)
    const listed = await platform.request("GET", `/v1/transfers?financial_account_id=${target.financial_account_id}`)
    expect(listed.body.total_count).toBe(1)
    await expectBooksBalance(platform)
  })
})
