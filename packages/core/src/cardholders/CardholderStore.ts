import type { SqlError } from "@effect/sql"
import { Context, type Effect, type Option } from "effect"
import type { InvalidRequest } from "../platform/Errors.js"
import type { PageWindow } from "../platform/Paging.js"
import type { CardholderOrderField } from "./OrderFields.js"
import type { Cardholder, CardholderFilter } from "./Records.js"

/** Storage port of cardholders (docs/cardholders.md). */
export interface CardholderStoreService {
  readonly insert: (cardholder: Cardholder) => Effect.Effect<void, SqlError.SqlError>
  /**
   * The program's cardholder with this id; `lock` (inside a transaction) holds its row until commit,
   * so a verification and a card issued for it are decided one after the other.
   */
  readonly find: (programId: string, id: string, lock?: boolean) => Effect.Effect<Option.Option<Cardholder>, SqlError.SqlError>
  /** Saves every mutable field (name, contact, address, individual, metadata, status, verification, updated_at). */
  readonly update: (cardholder: Cardholder) => Effect.Effect<void, SqlError.SqlError>
  /** One page of the program's cardholders, filtered by status and email, with the exact (maintained) total. */
  readonly list: (
    programId: string,
    filter: CardholderFilter,
    window: PageWindow<CardholderOrderField>
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<Cardholder>; readonly total: number }, SqlError.SqlError | InvalidRequest>
  /** Whether the program asks for a VERIFIED cardholder on every card, read from the database (never a cache). */
  readonly requiresVerifiedCardholder: (programId: string) => Effect.Effect<boolean, SqlError.SqlError>
}

/** The cardholder store port. */
export class CardholderStore extends Context.Tag("@issuing/core/CardholderStore")<CardholderStore, CardholderStoreService>() {}
