import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { ProgramCaller } from "../access/Records.js"
import { Conflict, InvalidRequest, type NotFound } from "../platform/Errors.js"
import { nowIso } from "../platform/Time.js"
import { applyMetadataChange, sameMetadata } from "../platform/Metadata.js"
import type { CardDeps } from "./CardDeps.js"
import type { CardChange } from "./CardStore.js"
import { CARD } from "./Issuance.js"
import type { Card, SpendControls, UpdateCard } from "./Records.js"
import { findOwned } from "../platform/FindOwned.js"

/** The controls a change leaves: each one sent replaces the card's, each one absent is kept. */
export const mergeControls = (card: SpendControls, change: UpdateCard): SpendControls => ({
  allowed_mcc_codes: change.allowed_mcc_codes ?? card.allowed_mcc_codes,
  blocked_mcc_codes: change.blocked_mcc_codes ?? card.blocked_mcc_codes,
  allowed_merchant_countries: change.allowed_merchant_countries ?? card.allowed_merchant_countries,
  blocked_merchant_countries: change.blocked_merchant_countries ?? card.blocked_merchant_countries,
  spending_limits: change.spending_limits ?? card.spending_limits
})

const sameControls = (a: SpendControls, b: SpendControls) =>
  JSON.stringify([
    a.allowed_mcc_codes,
    a.blocked_mcc_codes,
    a.allowed_merchant_countries,
    a.blocked_merchant_countries,
    a.spending_limits
  ]) ===
  JSON.stringify([b.allowed_mcc_codes, b.blocked_mcc_codes, b.allowed_merchant_countries, b.blocked_merchant_countries, b.spending_limits])

const sameCard = (a: CardChange, b: Card) => sameControls(a, b) && sameMetadata(a.metadata, b.metadata)

/**
 * PATCH /v1/cards/{card_id}: new spend controls or metadata for a card that is not closed,
 * validated as at issuance (a code both allowed and blocked → 400, naming the list that was sent;
 * more than 50 metadata keys after the change → 400 `metadata`, docs/api.md#metadata), decided
 * under the card's row lock, with `card.updated` and the change feed's bump in the same
 * transaction, so every node's next authorization sees them (docs/card-data.md#spend-controls). A
 * change that changes nothing answers the card and emits nothing.
 */
export const updateSpendControls = (
  deps: CardDeps,
  caller: ProgramCaller,
  cardId: string,
  change: UpdateCard
): Effect.Effect<Card, NotFound | Conflict | InvalidRequest | SqlError.SqlError> =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const { store } = deps
      const programId = caller.program.id
      const current = yield* findOwned(cardId, CARD, (id) => store.lockCard(programId, id))
      if (current.card.state === "CLOSED") {
        return yield* new Conflict({
          message: "A closed card cannot be changed: neither its spend controls nor its metadata.",
          param: null
        })
      }
      const controls = mergeControls(current.card, change)
      if (controls.allowed_mcc_codes.some((code) => controls.blocked_mcc_codes.includes(code))) {
        return yield* new InvalidRequest({
          message: "a merchant category code cannot be both allowed and blocked",
          param: change.blocked_mcc_codes !== undefined ? "blockedMccCodes" : "allowedMccCodes"
        })
      }
      if (controls.allowed_merchant_countries.some((code) => controls.blocked_merchant_countries.includes(code))) {
        return yield* new InvalidRequest({
          message: "a merchant country cannot be both allowed and blocked",
          param: change.blocked_merchant_countries !== undefined ? "blocked_merchant_countries" : "allowed_merchant_countries"
        })
      }
      const metadata =
        change.metadata === undefined ? current.card.metadata : yield* applyMetadataChange(current.card.metadata, change.metadata)
      const next: CardChange = { ...controls, metadata }
      if (sameCard(next, current.card)) return current.card
      const updated = yield* store.updateCard(programId, current.card.id, next, yield* nowIso)
      // Locked above, and only closing moves a card out of reach: present and not closed.
      const card = Option.getOrThrow(updated).card
      // Every node's card cache lets go of the card at commit (docs/operations.md#running-several-nodes).
      yield* deps.feed.publish("card", card.id)
      yield* deps.events.emit(programId, "card.updated", card)
      return card
    })
  )
