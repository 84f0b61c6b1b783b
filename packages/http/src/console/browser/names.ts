/**
 * Names instead of ids: a financial account or a wallet is shown by its holder's name, the
 * program's settlement account as such. Each name is read once per view, and only for the ids a
 * page shows: never a whole list.
 */
import type { Api, Page } from "./api.js"
import { h, replace } from "./dom.js"
import { shortId } from "./format.js"
import type { FinancialAccount, Wallet } from "./records.js"

/** How many wallets a picker offers: the newest page of the API's largest size. */
export const WALLET_CHOICES = 100

/** The newest wallets of the program, for a picker (the newest 100; a wallet's own view acts on any). */
export const walletChoices = async (api: Api): Promise<ReadonlyArray<Wallet>> =>
  (await api.get<Page<Wallet>>("/wallets", { page_size: WALLET_CHOICES })).data

/** A wallet as a picker lists it: the holder's name, and the email when there is one. */
export const walletLabel = (wallet: Wallet): string =>
  wallet.holder.email === null ? wallet.holder.name : `${wallet.holder.name} <${wallet.holder.email}>`

/** The names of financial accounts, read as a view needs them and kept for that view. */
export class AccountNames {
  private readonly names = new Map<string, Promise<string>>()

  constructor(private readonly api: Api) {}

  /** Names the accounts of wallets already read (no request). */
  know(wallets: ReadonlyArray<Wallet>): void {
    for (const wallet of wallets) this.names.set(wallet.financial_account_id, Promise.resolve(wallet.holder.name))
  }

  /** The account's name: its wallet holder's, "Program settlement", or its short id when it cannot be read. */
  name(accountId: string): Promise<string> {
    let name = this.names.get(accountId)
    if (name === undefined) {
      name = this.read(accountId)
      this.names.set(accountId, name)
    }
    return name
  }

  private async read(accountId: string): Promise<string> {
    try {
      const account = await this.api.get<FinancialAccount>(`/financial-accounts/${accountId}`)
      if (account.wallet_id === null) return account.kind === "settlement" ? "Program settlement" : `${account.kind} ${shortId(account.id)}`
      return (await this.api.get<Wallet>(`/wallets/${account.wallet_id}`)).holder.name
    } catch {
      return shortId(accountId)
    }
  }
}

/** A name filled in when it is read (the cell shows the short id until then). */
export const nameOf = (names: AccountNames, accountId: string): HTMLElement => {
  const cell = h("span", { "data-account": accountId }, shortId(accountId))
  void names.name(accountId).then((name) => replace(cell, name))
  return cell
}
