import { expect } from "vitest"
import type { TestPlatform } from "../support/platform.js"

/** Creates a wallet over HTTP and returns it. */
export const createWallet = async (platform: TestPlatform, name = "Ada Lovelace", currency?: string, program?: string) => {
  const response = await platform.request("POST", "/v1/wallets", {
    body: { holder: { name, email: "ada@example.com" }, ...(currency ? { currency } : {}) },
    ...(program ? { program } : {})
  })
  expect(response.status, response.text).toBe(200)
  return response.body as { id: string; financial_account_id: string }
}

/** Posts a transfer over HTTP. */
export const transfer = (platform: TestPlatform, body: Record<string, unknown>, program?: string) =>
  platform.request("POST", "/v1/transfers", { body: { currency: "USD", ...body }, ...(program ? { program } : {}) })

/** Funds an account by an inbound fednow_instant transfer (settled at once). */
export const fund = async (platform: TestPlatform, accountId: string, amount: number, currency = "USD") => {
  const response = await transfer(platform, { paymentRail: "fednow_instant", amount, currency, to_financial_account_id: accountId })
  expect(response.status, response.text).toBe(200)
  return response.body as { id: string; transaction_id: string }
}

/** The principal balance of an account. */
export const balanceOf = async (platform: TestPlatform, accountId: string): Promise<number> => {
  const response = await platform.request("GET", `/v1/financial-accounts/${accountId}`)
  expect(response.status, response.text).toBe(200)
  return response.body.balance.amount
}
