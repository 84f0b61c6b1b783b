import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { blockedBy, withLockClients } from "../support/locks.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, issueCard } from "./helpers.js"

/**
 * A card without a spending window is authorized without its row lock: the card is read, and the
 * approval's one posting call re-checks that it is still ACTIVE under a lock a freeze waits for
 * (docs/ledger.md#card-authorizations). Here a freeze (POST /v1/cards/{id}/freeze) is in flight —
 * its row update not yet committed — when the authorization reads the card as ACTIVE; the posting
 * waits for it (observed in pg_stat_activity), sees FROZEN, writes nothing, and the authorization
 * declines.
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
    expect(approved.body.status, approved.text).toBe("PENDING")

    // The freeze goes through its endpoint. Its transaction updates the card (taking the row's
    // lock) and then bumps the change-feed version; a client of the test's holds that version row,
    // so the freeze stays uncommitted, holding the card's lock, until the test lets it go.
    await withLockClients(platform.database.url, async ({ blocker, watcher }) => {
      await blocker.query("BEGIN")
      await blocker.query("SELECT version FROM issuing_changes WHERE id = 1 FOR UPDATE")
      const blockerPid = (await blocker.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number
      /** The one backend of this database that `holder` blocks (waiting for a lock it holds). */
      const onlyBlockedBy = async (holder: number, what: string) => {
        const pids = await blockedBy(watcher, holder, what)
        expect(pids, what).toHaveLength(1)
        return pids[0]!
      }
      const freezing = platform.request("POST", `/v1/cards/${card.id}/freeze`)
      const freezerPid = await onlyBlockedBy(blockerPid, "the freeze")
      // The freeze has updated the card and not committed: its row is locked.
      await expect(watcher.query("SELECT id FROM issuing_cards WHERE id = $1 FOR SHARE NOWAIT", [card.id])).rejects.toMatchObject({
        code: "55P03"
      })
      const pending = platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: card.id, amount: 100, mcc: "5411" } })
      // The race happened: the authorization read the card (ACTIVE: the freeze is not committed)
      // and its posting now waits for the lock the freeze holds.
      await onlyBlockedBy(freezerPid, "the authorization")
      await blocker.query("COMMIT")
      const frozen = await freezing
      expect(frozen.status, frozen.text).toBe(200)
      expect(frozen.body.state).toBe("FROZEN")
      const declined = await pending
      expect(declined.status, declined.text).toBe(200)
      expect(declined.body).toMatchObject({ status: "DECLINED", decline_reason: "CARD_FROZEN", card_id: card.id })
    })
    const account = await platform.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
    expect(account.body.available_balance.amount).toBe(9_900)
  })
})
