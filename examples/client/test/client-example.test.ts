import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPlatform, type TestPlatform } from "../../../test/support/platform.js"
import { runExample } from "../main.js"

describe("examples/client", () => {
  let platform: TestPlatform
  beforeAll(async () => {
    platform = await startPlatform("sqlite")
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("funds a wallet, lists its transfers across pages, issues a card and reports a refused payout", async () => {
    const lines: Array<string> = []
    const result = await runExample({
      baseUrl: platform.baseUrl,
      apiKey: platform.org.api_key,
      programId: platform.org.program_id,
      log: (line) => lines.push(line)
    })
    expect(result.account.balance).toEqual({ amount: 13_000, currency: "USD" })
    expect(result.transfers.map((transfer: { amount: number }) => transfer.amount).sort((a: number, b: number) => a - b)).toEqual([
      500, 2_500, 10_000
    ])
    expect(result.refused).toMatchObject({ code: "insufficient_funds", param: "amount" })
    expect(result.card.object).toBe("card")
    expect(lines.join("\n")).toContain(`card ${result.card.id}`)
    expect(lines.join("\n")).not.toContain(platform.org.api_key)
  })
})
