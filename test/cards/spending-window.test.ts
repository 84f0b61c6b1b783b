import { SqlClient } from "@effect/sql"
import { windowStart } from "@issuing/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { createWallet, fund, issueCard } from "./helpers.js"

/**
 * The spending window's rollover (docs/ledger.md, card authorizations): a windowed spending period
 * sums the card's open holds and settled amounts since the start of the current UTC day, ISO week, month
 * or year. The HTTP platform reads the real clock (there is no test clock to move), so instead of
 * waiting for midnight the approved spend is moved back across the window's start in the database
 * — the one thing that changes when a window rolls over — and the decision is asked again over HTTP.
 */
describe.each(STORE_KINDS)("spending window rollover on %s", (kind) => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform(kind)
  })
  afterAll(async () => {
    await platform?.close()
  })

  const authorize = async (cardId: string, amount: number) => {
    const response = await platform.request("POST", "/v1/simulate/authorizations", { body: { card_id: cardId, amount, mcc: "5411" } })
    expect(response.status, response.text).toBe(200)
    return response.body as { id: string; status: string; decline_reason: string | null }
  }
  /** Moves a transaction's creation time (what the window sums over). */
  const backdate = (transactionId: string, at: Date) =>
    platform.instance.runtime.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE issuing_transactions SET created_at = ${at.toISOString()} WHERE id = ${transactionId}`
      )
    )

  it.each(["DAILY", "WEEKLY", "MONTHLY", "YEARLY"] as const)(
    "%s: refuses at the limit, counts spend from the window's first instant, and approves again once it lies in the previous window",
    async (interval) => {
      const wallet = await createWallet(platform)
      await fund(platform, wallet.financial_account_id, 100_000)
      const card = await issueCard(platform, wallet.id, { spending_period: { interval, amount: 3_000 } })
      const spent = await authorize(card.id, 3_000)
      expect(spent.status).toBe("PENDING")
      expect(await authorize(card.id, 1)).toMatchObject({ status: "DECLINED", decline_reason: "SPENDING_LIMIT_EXCEEDED" })

      const start = windowStart(interval, Date.now())!
      // At the window's first instant the spend is still this window's.
      await backdate(spent.id, start)
      expect(await authorize(card.id, 1)).toMatchObject({ status: "DECLINED", decline_reason: "SPENDING_LIMIT_EXCEEDED" })
      // One millisecond earlier it is the previous window's: the whole limit is free again, and only it.
      await backdate(spent.id, new Date(start.getTime() - 1))
      expect((await authorize(card.id, 3_000)).status).toBe("PENDING")
      expect(await authorize(card.id, 1)).toMatchObject({ status: "DECLINED", decline_reason: "SPENDING_LIMIT_EXCEEDED" })
      // Money moved only for the approvals.
      const account = await platform.request("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
      expect(account.body.available_balance.amount).toBe(94_000)
    }
  )

  it("ALL_TIME never rolls over", async () => {
    const wallet = await createWallet(platform)
    await fund(platform, wallet.financial_account_id, 10_000)
    const card = await issueCard(platform, wallet.id, { spending_period: { interval: "ALL_TIME", amount: 3_000 } })
    const spent = await authorize(card.id, 3_000)
    expect(spent.status).toBe("PENDING")
    await backdate(spent.id, new Date(Date.UTC(2000, 0, 1)))
    expect(await authorize(card.id, 1)).toMatchObject({ status: "DECLINED", decline_reason: "SPENDING_LIMIT_EXCEEDED" })
  })
})
