import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { Rows } from "../ledger/LedgerStore.js"
import type { InvalidRequest } from "../platform/Errors.js"
import type { PageWindow } from "../platform/Paging.js"
import type { DisputeOrderField } from "./OrderFields.js"
import type { Dispute, DisputeFilter } from "./Records.js"

/**
 * Storage port of disputes (docs/disputes.md). Every write runs in the caller's transaction, beside
 * the posting of the dispute's money: a submission's claim, its dispute row and its credit commit
 * together or not at all.
 */
export interface DisputeStoreService {
  /**
   * Adds `amountMinor` to the card transaction's disputed amount (and sets its updated_at) only
   * if it still fits in what settled and was not disputed yet — a conditional update, exact
   * whatever else runs; false when it does not fit (nothing written).
   */
  readonly claimDisputable: (transactionId: string, amountMinor: number, at: string) => Effect.Effect<boolean, SqlError.SqlError>
  /** Inserts a new dispute and counts it in its list's totals. */
  readonly insertDispute: (dispute: Dispute) => Effect.Effect<void, SqlError.SqlError>
  /** A dispute of the program; `lock` takes its row lock on PostgreSQL (SQLite's writer is alone). */
  readonly findDispute: (programId: string, disputeId: string, lock: boolean) => Effect.Effect<Option.Option<Dispute>, SqlError.SqlError>
  /** Writes a resolution (status, reversal transfer, updated_at) of a dispute that was `previous`, moving its count. */
  readonly resolveDispute: (dispute: Dispute, previous: Dispute) => Effect.Effect<void, SqlError.SqlError>
  /** The wallet account of a card transaction's card: where its dispute credits go. */
  readonly walletAccountOf: (transactionId: string) => Effect.Effect<Option.Option<string>, SqlError.SqlError>
  /** The program's disputes, filtered, one page in time order, with the exact total (maintained counts). */
  readonly listDisputes: (
    programId: string,
    filter: DisputeFilter,
    window: PageWindow<DisputeOrderField>
  ) => Effect.Effect<Rows<Dispute>, SqlError.SqlError | InvalidRequest>
}

/** The dispute storage port. */
export class DisputeStore extends Context.Tag("@issuing/core/DisputeStore")<DisputeStore, DisputeStoreService>() {}
