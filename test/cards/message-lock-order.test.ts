import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { blockedBy, withLockClients } from "../support/locks.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, issueCard } from "./helpers.js"

/**
 * Every PostgreSQL write takes balance rows in one order, (account, book, slot), also across its
 * statements (docs/ledger.md#posting-rules). A card message that locks the wallet's row and posts a
 * transfer into the settlement account — a clearing, a single-message approval — used to lock the
 * wallet's row first and the settlement account's slot after it: the reverse of a return, which
 * posts from that slot into the wallet, and the two deadlocked (14 times in one run of the
 * concurrent card-spend test). Here a client of the test holds the settlement account's rows, as
 * such a return would; while the message waits for them it must hold no lock on the wallet's row,
 * so the return could go on and no cycle can form.
 */
describe("the lock order of card messages on postgres", () => {
  let platform: TestPlatform

  beforeAll(async () => {
    platform = await startPlatform("postgres")
    // The program's settlement account is made with its first money movement: before the wallets below.
    const first = await createWallet(platform)
    await fund(platform, first.financial_account_id, 1)
  }, 60_000)
  afterAll(async () => {
    await platform?.close()
  })

  const cases = [
    {
      message: "a clearing",
      send: async (cardId: string) => {
        const hold = await platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: cardId, amount: 150, mcc: "5411" } })
        expect(hold.body.status, hold.text).toBe("PENDING")
        return () => platform.request("POST", `/v1/simulate/transactions/${hold.body.id}/clearing`, { body: { amount: 100 } })
      },
      available: 10_000 - 100
    },
    {
      message: "a single-message approval",
      send: async (cardId: string) => () =>
        platform.request("POST", "/v1/simulate/authorizations", {
          body: { card_id: cardId, amount: 100, mcc: "5411", kind: "FINANCIAL_AUTHORIZATION" }
        }),
      available: 10_000 - 100
    }
  ]

  it.each(cases)("$message waiting for the settlement account's rows holds no lock on the wallet's", async ({ send, available }) => {
    const wallet = await createWallet(platform)
    await fund(platform, wallet.financial_account_id, 10_000)
    const card = await issueCard(platform, wallet.id)
    const sending = await send(card.id)
    const settlements = await platform.request("GET", "/v1/financial-accounts?kind=settlement&currency=USD")
    const settlement = settlements.body.data[0].id as string
    // Ids are time-ordered and the settlement account is older than the wallet: in the order its
    // rows come first, so a message that locks in order waits for them before it takes the wallet's.
    expect(settlement < wallet.financial_account_id).toBe(true)

    await withLockClients(platform.database.url, async ({ blocker, watcher }) => {
      // The settlement account's row exists in every slot (all zero: its sums are unchanged), so
      // whichever slot the message's connection adds into, the blocker holds it.
      await blocker.query(
        `INSERT INTO issuing_balances (financial_account_id, book, slot, currency, debits_minor, credits_minor, pending_minor, updated_at)
         SELECT $1, book, slot, 'USD', 0, 0, 0, now() FROM unnest(ARRAY['principal', 'cash']) AS book, generate_series(0, 15) AS slot
         ON CONFLICT DO NOTHING`,
        [settlement]
      )
      await blocker.query("BEGIN")
      await blocker.query("SELECT 1 FROM issuing_balances WHERE financial_account_id = $1 FOR UPDATE", [settlement])
      const blockerPid = (await blocker.query("SELECT pg_backend_pid() AS pid")).rows[0].pid as number
      const answering = sending()
      await blockedBy(watcher, blockerPid, "the message")
      // A return from the settlement account into the wallet would now lock the wallet's row.
      await watcher.query("BEGIN")
      await watcher.query("SELECT 1 FROM issuing_balances WHERE financial_account_id = $1 FOR UPDATE NOWAIT", [wallet.financial_account_id])
      await watcher.query("ROLLBACK")
      await blocker.query("ROLLBACK")

      const answer = await answering
      expect(answer.status, answer.text).toBe(200)
    })
    const account = await platform.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
    expect(account.body.available_balance.amount).toBe(available)
  })
})
