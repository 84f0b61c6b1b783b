import type { FinancialAccount } from "./Records.js"

/** Most accounts whose immutable attributes one process keeps in memory. */
export const ACCOUNT_CACHE_SIZE = 10_000

/**
 * The attributes of financial accounts that never change after creation (id, program, kind,
 * currency, wallet), so a transfer can be validated without reading its accounts. The balances in
 * the cached records go stale and are never used: the store's posting checks funds under its own
 * lock. Accounts are never deleted or moved, so an entry cannot go wrong in this process or
 * because of another; a miss reads. Bounded: the oldest entry goes first.
 */
export const makeAccountCache = (capacity = ACCOUNT_CACHE_SIZE) => {
  const byId = new Map<string, FinancialAccount>()
  const settlements = new Map<string, FinancialAccount>()
  const put = <K>(map: Map<K, FinancialAccount>, key: K, account: FinancialAccount) => {
    if (map.size >= capacity) map.delete(map.keys().next().value!)
    map.set(key, account)
  }
  return {
    /** Every wanted account (of this program) and the settlement account, or undefined on any miss. */
    lookup: (
      programId: string,
      ids: ReadonlyArray<string>,
      settlementCurrency: string | null
    ): ReadonlyArray<FinancialAccount> | undefined => {
      const found: Array<FinancialAccount> = []
      for (const id of ids) {
        const account = byId.get(id)
        if (account === undefined || account.program_id !== programId) return undefined
        found.push(account)
      }
      if (settlementCurrency !== null) {
        const settlement = settlements.get(`${programId}\u0000${settlementCurrency}`)
        if (settlement === undefined) return undefined
        found.push(settlement)
      }
      return found
    },
    /** Keeps the immutable attributes of accounts just read. */
    remember: (accounts: ReadonlyArray<FinancialAccount>): void => {
      for (const account of accounts) {
        put(byId, account.id, account)
        if (account.kind === "settlement") put(settlements, `${account.program_id}\u0000${account.currency}`, account)
      }
    }
  }
}

/** A process's cache of immutable account attributes. */
export type AccountCache = ReturnType<typeof makeAccountCache>
