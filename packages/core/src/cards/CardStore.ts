import type { InvalidRequest } from "../platform/Errors.js"
import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { PageWindow } from "../platform/Paging.js"
import type { CardAuditOrderField, CardOrderField } from "./OrderFields.js"
import type {
  CardAuditAction,
  CardAuditRecord,
  CardRecord,
  CardState,
  SealedCardData,
  SpendControls,
  StoredEmbedSession
} from "./Records.js"
import type { Metadata } from "../platform/Metadata.js"
import type { WindowedInterval, WindowSpend } from "./SpendRules.js"

/** What a PATCH of a card replaces: its spend controls and its metadata, as the change leaves them. */
export interface CardChange extends SpendControls {
  readonly metadata: Metadata
}

export interface CardFilter {
  readonly walletId?: string | undefined
  readonly state?: CardState | undefined
  /** The number's last four digits: one range of `issuing_cards_by_last_four` (migration 0699). */
  readonly lastFour?: string | undefined
}

export interface CardAuditFilter {
  readonly cardId?: string | undefined
  readonly action?: CardAuditAction | undefined
}

/** A new number, code and expiry for a card (issuance and reissue). */
export interface CardSecrets {
  readonly sealed: SealedCardData
  readonly last_four: string
  readonly exp_month: number
  readonly exp_year: number
}

/** Storage port for cards, their sealed data, embed sessions and the card-data audit trail. */
export interface CardStoreService {
  readonly insertCard: (record: CardRecord) => Effect.Effect<void, SqlError.SqlError>
  readonly findCard: (programId: string, cardId: string) => Effect.Effect<Option.Option<CardRecord>, SqlError.SqlError>
  /** Reads the card and holds a row lock until the transaction ends (PostgreSQL; SQLite transactions are exclusive). */
  readonly lockCard: (programId: string, cardId: string) => Effect.Effect<Option.Option<CardRecord>, SqlError.SqlError>
  readonly listCards: (
    programId: string,
    filter: CardFilter,
    window: PageWindow<CardOrderField>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<CardRecord>; readonly total: number }, SqlError.SqlError | InvalidRequest>
  /** The program's card whose stored fingerprint is any of `fingerprints` (one per configured vault key). */
  readonly findByFingerprints: (
    programId: string,
    fingerprints: ReadonlyArray<string>
  ) => Effect.Effect<Option.Option<CardRecord>, SqlError.SqlError>
  /**
   * The card, of any program, whose stored fingerprint is any of `fingerprints` (numbers are
   * globally unique): a network message names a card by its number alone (docs/network.md); the
   * caller checks the program is one it may reach.
   */
  readonly findByFingerprintsInAnyProgram: (
    fingerprints: ReadonlyArray<string>
  ) => Effect.Effect<Option.Option<CardRecord>, SqlError.SqlError>
  /** True when any card of any program has one of these fingerprints (numbers are globally unique). */
  readonly fingerprintTaken: (fingerprints: ReadonlyArray<string>) => Effect.Effect<boolean, SqlError.SqlError>
  /** Moves the card to `to` when its state is one of `from`; none when it was not in such a state. */
  readonly transition: (
    programId: string,
    cardId: string,
    from: ReadonlyArray<CardState>,
    to: CardState,
    at: string
  ) => Effect.Effect<Option.Option<CardRecord>, SqlError.SqlError>
  /** Replaces the spend controls and metadata of a card that is not closed; none when it is closed (or gone). */
  readonly updateCard: (
    programId: string,
    cardId: string,
    change: CardChange,
    at: string
  ) => Effect.Effect<Option.Option<CardRecord>, SqlError.SqlError>
  /** Replaces number, code and expiry when the card's state is one of `from`. */
  readonly replaceSecrets: (
    programId: string,
    cardId: string,
    from: ReadonlyArray<CardState>,
    secrets: CardSecrets,
    at: string
  ) => Effect.Effect<Option.Option<CardRecord>, SqlError.SqlError>
  /**
   * Cards with an id above `afterId` (in id order) whose sealed data was made with a key other than
   * `currentKeyId` or is not bound to its row (`v1`), for re-sealing.
   */
  readonly cardsToReseal: (
    currentKeyId: string,
    afterId: string,
    limit: number
  ) => Effect.Effect<ReadonlyArray<CardRecord>, SqlError.SqlError>
  /**
   * Re-seals a card's data without changing the number (rotation, binding) when its ciphertexts are
   * still `previous`'s; false when the row moved on (e.g. a reissue meanwhile).
   */
  /**
   * One card per vault key id the stored cards are sealed under (a walk of the vault-key index: as
   * many steps as there are keys, whatever the number of cards); the start-up check opens them.
   */
  readonly sealedSamples: Effect.Effect<ReadonlyArray<CardRecord>, SqlError.SqlError>
  readonly reseal: (cardId: string, previous: SealedCardData, sealed: SealedCardData) => Effect.Effect<boolean, SqlError.SqlError>

  /**
   * The running totals of the card's windows (docs/card-transactions.md#running-totals): for each
   * (interval, first day) asked, what its transactions created in that window hold and settled and
   * how many approved authorizations count there — one row each of a maintained table, whatever
   * the card's history. A window nothing was written in is left out (it spent nothing).
   */
  readonly windowSpend: (
    cardId: string,
    windows: ReadonlyArray<{ readonly interval: WindowedInterval; readonly window: string }>
  ) => Effect.Effect<ReadonlyArray<WindowSpend>, SqlError.SqlError>

  readonly insertEmbedSession: (session: StoredEmbedSession) => Effect.Effect<void, SqlError.SqlError>
  /** The session with this token hash while the key that created it is unrevoked and may display cards. */
  readonly findEmbedSession: (tokenHash: string) => Effect.Effect<Option.Option<StoredEmbedSession>, SqlError.SqlError>
  /** Ends every session of a card (reissue and close make outstanding sessions worthless). */
  readonly deleteEmbedSessions: (cardId: string) => Effect.Effect<void, SqlError.SqlError>
  /** Deletes sessions that expired before `before`; returns how many. */
  readonly purgeEmbedSessions: (before: string) => Effect.Effect<number, SqlError.SqlError>

  readonly insertAudit: (record: CardAuditRecord) => Effect.Effect<void, SqlError.SqlError>
  /**
   * Inside a transaction, makes this key's search-by-pan wait for its other searches' transactions
   * (PostgreSQL: a transaction-scoped advisory lock; SQLite: its write transactions already run one
   * at a time), so counting the recent searches and writing this one are one atomic step.
   */
  readonly lockPanSearches: (apiKeyId: string) => Effect.Effect<void, SqlError.SqlError>
  /**
   * When the key's search_by_pan records since `since` were made (misses only when `missesOnly`),
   * newest first, at most `limit` (the search budget and miss limit count these).
   */
  readonly recentSearches: (
    apiKeyId: string,
    since: string,
    limit: number,
    missesOnly: boolean
  ) => Effect.Effect<ReadonlyArray<string>, SqlError.SqlError>
  readonly listAudit: (
    programId: string,
    filter: CardAuditFilter,
    window: PageWindow<CardAuditOrderField>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<CardAuditRecord>; readonly total: number }, SqlError.SqlError | InvalidRequest>
}

/** The card storage port. */
export class CardStore extends Context.Tag("@issuing/core/CardStore")<CardStore, CardStoreService>() {}
