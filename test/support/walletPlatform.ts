import type { IssuingSettings } from "@issuing/core"
import { afterAll, beforeAll, expect } from "vitest"
import type { StoreKind } from "./databases.js"
import { startPlatform, type TestPlatform } from "./platform.js"

/** A wallet of the platform's default program, funded before the tests. */
export interface FundedWallet {
  readonly id: string
  readonly financial_account_id: string
}

/** What `useFundedWallet` sets up; its fields are there once the block's tests run. */
export interface WalletPlatform {
  readonly platform: TestPlatform
  readonly wallet: FundedWallet
}

/**
 * For the describe block it is called in: a platform of `kind` (on a migrated database) started
 * before the block's tests, with one wallet of its default program credited `funds` by an inbound
 * instant transfer, and closed after them. The card files that issue their cards on one funded
 * wallet share this instead of each repeating it.
 */
export const useFundedWallet = (kind: StoreKind, funds: number, settings: Partial<IssuingSettings> = {}): WalletPlatform => {
  const fixture = {} as { platform: TestPlatform; wallet: FundedWallet }
  beforeAll(async () => {
    fixture.platform = await startPlatform(kind, settings)
    const wallet = await fixture.platform.request("POST", "/v1/wallets", { body: { holder: { name: "Ada Lovelace" } } })
    expect(wallet.status, wallet.text).toBe(200)
    const funded = await fixture.platform.request("POST", "/v1/transfers", {
      body: { payment_rail: "fednow_instant", amount: funds, currency: "USD", to_financial_account_id: wallet.body.financial_account_id }
    })
    expect(funded.status, funded.text).toBe(200)
    fixture.wallet = { id: wallet.body.id, financial_account_id: wallet.body.financial_account_id }
  })
  afterAll(async () => {
    await fixture.platform?.close()
  })
  return fixture
}
