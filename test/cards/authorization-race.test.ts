import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, issueCard } from "./helpers.js"

/**
 * A card without a spending window is authorized without its row lock: the card is read, and the
 * approval's one posting call re-checks that it is still ACTIVE under a lock a freeze waits for
 * (docs/ledger.md#card-authorizations). Here a freeze is in flight (its row update not yet
 * committed) when the authorization reads the card as ACTIVE; the posting waits for it, sees
 * FROZEN, writes nothing, and the authorization declines.
 */
describe("an authorization racing a freeze on postgres", () => {
  let platform: TestPlatform

  beforeAll(async () => {
    platform = await startPlatform("postgres")
  }, 60_000)
  afterAll(async () => {
    await platform?.close()
  })

  it("declines (CARD_FROZEN) when a freeze commits between its read of the card and its posting, moving no money", async () => {
    const wallet = await createWallet(platform)
    await fund(platform, wallet.financial_account_id, 10_000)
    const card = await issueCard(platform, wallet.id)
    const approved = await platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: card.id, amount: 100, mcc: "5411" } })
    expect(approved.body.status, approved.text).toBe("APPROVED")

    const freezer = new pg.Client({ connectionString: platform.database.url })
    const watcher = new pg.Client({ connectionString: platform.database.url })
    await freezer.connect()
    await watcher.connect()
    try {
      await freezer.query("BEGIN")
      await freezer.query("UPDATE issuing_cards SET state = 'FROZEN' WHERE id = $1", [card.id])
      const pending = platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: card.id, amount: 100, mcc: "5411" } })
      // The authorization's posting now waits on the row lock the uncommitted freeze holds.
      for (let waited = 0; ; waited += 20) {
        const { rows } = await watcher.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        if (rows[0].n > 0) break
        if (waited > 10_000) throw new Error("the authorization never waited for the card's lock")
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await freezer.query("COMMIT")
      const declined = await pending
      expect(declined.status, declined.text).toBe(200)
      expect(declined.body).toMatchObject({ status: "DECLINED", decline_reason: "CARD_FROZEN", card_id: card.id })
    } finally {
      await freezer.end()
      await watcher.end()
    }
    const account = await platform.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
    expect(account.body.balance.amount).toBe(9_900)
  })
})
