import { expect } from "vitest"
import type { TestPlatform } from "../support/platform.js"

/** A wallet of the platform's default program (or of `program` with `key`). */
export const createWallet = async (
  platform: TestPlatform,
  options: { key?: string; program?: string; currency?: string } = {}
): Promise<{ id: string; financial_account_id: string }> => {
  const response = await platform.request("POST", "/v1/wallets", {
    key: options.key ?? platform.org.api_key,
    program: options.program ?? platform.org.program_id,
    body: { holder: { name: "Ada Lovelace" }, ...(options.currency ? { currency: options.currency } : {}) }
  })
  expect(response.status, response.text).toBe(200)
  return response.body
}

/** Credits a wallet account through an inbound instant transfer from the settlement account. */
export const fund = async (platform: TestPlatform, financialAccountId: string, amount: number, currency = "USD") => {
  const response = await platform.request("POST", "/v1/transfers", {
    body: { paymentRail: "fednow_instant", amount, currency, to_financial_account_id: financialAccountId }
  })
  expect(response.status, response.text).toBe(200)
  return response.body
}

/** Issues a card on a wallet; extra body fields are merged in. */
export const issueCard = async (platform: TestPlatform, walletId: string, extra: Record<string, unknown> = {}) => {
  const response = await platform.request("POST", "/v1/cards", { body: { wallet_id: walletId, type: "VIRTUAL", ...extra } })
  expect(response.status, response.text).toBe(200)
  return response.body
}

/** Number and code of a card through the reveal call (the org's admin key has PAN reveal). */
export const reveal = async (
  platform: TestPlatform,
  cardId: string
): Promise<{ pan: string; cvv: string; exp_month: number; exp_year: number }> => {
  const response = await platform.request("POST", `/v1/cards/${cardId}/reveal`)
  expect(response.status, response.text).toBe(200)
  return response.body
}

/** The Luhn check. */
export const luhnValid = (digits: string): boolean => {
  let sum = 0
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let digit = Number(digits[i])
    if (double) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
  }
  return sum % 10 === 0
}

/** Creates an API key with the organization's admin key; `fields` is the request body beside the name. */
export const createKey = async (
  platform: TestPlatform,
  fields: { role: "admin" | "developer" | "viewer"; pan_reveal?: boolean; card_display?: boolean }
): Promise<{ id: string; secret: string; role: string; pan_reveal: boolean; card_display: boolean }> => {
  const response = await platform.request("POST", "/v1/api-keys", { program: null, body: { name: `${fields.role} key`, ...fields } })
  expect(response.status, response.text).toBe(200)
  return response.body
}

/** A card's audit records (newest first), all actions or one. */
export const auditRecords = async (platform: TestPlatform, cardId: string, action?: string): Promise<Array<any>> => {
  const query = `card_id=${cardId}&page_size=100${action === undefined ? "" : `&action=${action}`}`
  const response = await platform.request("GET", `/v1/card-audit-records?${query}`)
  expect(response.status, response.text).toBe(200)
  return response.body.data
}
