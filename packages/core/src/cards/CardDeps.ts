import type { CardholderStoreService } from "../cardholders/CardholderStore.js"
import type { ChangeFeedService } from "../changes/ChangeFeed.js"
import type { Events } from "../events/Events.js"
import type { Ledger } from "../ledger/Ledger.js"
import type { IssuingSettings } from "../platform/IssuingConfig.js"
import type { TransactorService } from "../sql/Transactor.js"
import type { VaultService } from "../vault/Vault.js"
import type { CardStoreService } from "./CardStore.js"

/** What the card operations (Issuance.ts, CardData.ts) work with, gathered once when the service is built. */
export interface CardDeps {
  readonly store: CardStoreService
  readonly ledger: Ledger
  readonly transactor: TransactorService
  readonly vault: VaultService
  readonly events: Events
  readonly config: IssuingSettings
  /** Lifecycle changes are published in their transaction; reads of cards are cached against it. */
  readonly feed: ChangeFeedService
  /** A card's cardholder, checked at issuance (docs/cardholders.md). */
  readonly cardholders: CardholderStoreService
}
