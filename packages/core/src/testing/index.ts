/**
 * @issuing/core/testing: the store contract suite. Each storage port has one contract file; both
 * store packages run every contract against a real database of their kind.
 *
 * Adding a port: write `<port>Contract.ts` exporting a `PortContract`, then add one line to
 * `PORT_CONTRACTS` below.
 */
import { describe } from "@effect/vitest"
import { accessContract } from "./accessContract.js"
import { authorizationEndpointContract } from "./authorizationEndpointContract.js"
import { cardContract } from "./cardContract.js"
import { cardholderContract } from "./cardholderContract.js"
import { changeFeedContract } from "./changeFeedContract.js"
import type { ContractStoreLayer, PortContract } from "./Contract.js"
import { disputeContract } from "./disputeContract.js"
import { eventContract } from "./eventContract.js"
import { idempotencyContract } from "./idempotencyContract.js"
import { ledgerContract } from "./ledgerContract.js"
import { oauthContract } from "./oauthContract.js"
import { transactorContract } from "./transactorContract.js"
import { webhookContract } from "./webhookContract.js"

export type { ContractStoreLayer, ContractStores, PortContract } from "./Contract.js"
export { freshOrganization, sampleApiKey, sampleProgram } from "./Fixtures.js"
export {
  type CardSpend,
  cardSpendTriggerSteps,
  checkCardSpendFixture,
  expectedCardSpend,
  insertCardSpendFixture,
  maintainedCardSpend
} from "./CardSpendChecks.js"
export {
  type CardSpendTotal,
  checkSpendTotalsFixture,
  expectedSpendTotals,
  maintainedSpendTotals,
  spendTotalsTriggerSteps,
  TOTAL_INTERVALS
} from "./CardSpendTotalsChecks.js"
export { countingWritesCheck, expectedListCounts, type ListCount, maintainedListCounts } from "./ListCountChecks.js"

/** Every port's contract, by name. One line per port. */
export const PORT_CONTRACTS: Record<string, PortContract> = {
  access: accessContract,
  idempotency: idempotencyContract,
  events: eventContract,
  cards: cardContract,
  ledger: ledgerContract,
  webhooks: webhookContract,
  transactor: transactorContract,
  changes: changeFeedContract,
  oauth: oauthContract,
  authorizationEndpoints: authorizationEndpointContract,
  disputes: disputeContract,
  cardholders: cardholderContract
}

/**
 * Registers the whole contract suite for one store. `makeLayer` is called once per port contract
 * and must return a layer over a fresh, migrated database (a new SQLite file, a new PostgreSQL
 * database), so the ports' tests never see each other's rows.
 */
export const storeContract = (name: string, makeLayer: () => ContractStoreLayer): void => {
  describe(`store contract on ${name}`, () => {
    for (const [port, contract] of Object.entries(PORT_CONTRACTS)) contract(port, makeLayer())
  })
}
