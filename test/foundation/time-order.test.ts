import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createWallet, fund } from "../ledger/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { expectEnvelope, startPlatform, type TestPlatform } from "../support/platform.js"

// docs/api.md#paging: the lists that grow with money movement order by time only; bounded lists
// keep their other fields. Over HTTP, on both stores.
describe.each(STORE_KINDS)("time-only order of growing lists on %s", (kind) => {
  let platform: TestPlatform
  let accountId: string
  let transactionId: string

  beforeAll(async () => {
    platform = await startPlatform(kind)
    accountId = (await createWallet(platform, "Time")).financial_account_id
    transactionId = (await fund(platform, accountId, 500)).transaction_id
  })
  afterAll(async () => {
    await platform?.close()
  })

  const growing = (): ReadonlyArray<readonly [string, string]> => [
    ["/v1/events", "created_at"],
    ["/v1/transfers", "created_at, updated_at"],
    ["/v1/transactions", "created_at, updated_at"],
    [`/v1/transactions/${transactionId}/book-transfers`, "posted_at, created_at"],
    [`/v1/financial-accounts/${accountId}/book-transfers`, "posted_at, created_at"],
    ["/v1/card-audit-records", "created_at"],
    ["/v1/disputes", "created_at, updated_at"],
    ["/v1/webhook-attempts", "created_at, attempted_at"]
  ]

  it("refuses any order_by but a time field, listing the valid ones, and writes nothing", async () => {
    const before = (await platform.request("GET", "/v1/events")).body.total_count
    for (const [path, fields] of growing()) {
      for (const field of ["amount", "status", "id"]) {
        for (const spelling of ["order_by", "order-by"]) {
          const error = expectEnvelope(await platform.request("GET", `${path}?${spelling}=${field}`), 400, {
            code: "invalid_request",
            param: "order_by"
          })
          expect(error.message, `${path} ${field}`).toBe(`Invalid order_by. Valid fields: ${fields}.`)
        }
      }
      for (const field of fields.split(", ")) {
        const response = await platform.request("GET", `${path}?order_by=${field}&ascending=false`)
        expect(response.status, `${path} ${field}: ${response.text}`).toBe(200)
      }
    }
    expect((await platform.request("GET", "/v1/events")).body.total_count).toBe(before)
  })

  it("keeps the other fields of bounded lists", async () => {
    for (const [path, field, program] of [
      ["/v1/programs", "name", null],
      ["/v1/api-keys", "name", null],
      ["/v1/wallets", "updated_at", undefined],
      ["/v1/cards", "updated_at", undefined]
    ] as const) {
      const response = await platform.request("GET", `${path}?order_by=${field}`, program === null ? { program: null } : {})
      expect(response.status, `${path}: ${response.text}`).toBe(200)
    }
  })
})
