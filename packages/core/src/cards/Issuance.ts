import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { ProgramCaller } from "../access/Records.js"
import { BusinessRuleViolation, Conflict, type NotFound } from "../platform/Errors.js"
import { findOwned } from "../platform/FindOwned.js"
import { newId } from "../platform/Ids.js"
import { EMPTY_METADATA } from "../platform/Metadata.js"
import { nowIso, nowMs } from "../platform/Time.js"
import { cardholderForCard } from "../cardholders/Cardholders.js"
import { expiryFrom, generateCvv, generatePan, replacementExpiry } from "./CardNumbers.js"
import type { CardDeps } from "./CardDeps.js"
import type { CardSecrets } from "./CardStore.js"
import { type Card, type CardState, type IssueCard, spendingPeriodOf } from "./Records.js"
import { sealCard } from "./Sealing.js"

/** Attempts at drawing an unused number before issuance gives up (the BIN's number space is nearly full). */
export const MAX_NUMBER_ATTEMPTS = 16

/** Lifecycle actions of POST /v1/cards/{card_id}/<action>. */
export type CardLifecycleAction = "freeze" | "unfreeze" | "close" | "reissue"

/** From which states each lifecycle action is allowed, and where it leads (null: the state is kept). */
export const LIFECYCLE: Record<CardLifecycleAction, { readonly from: ReadonlyArray<CardState>; readonly to: CardState | null }> = {
  freeze: { from: ["ACTIVE"], to: "FROZEN" },
  unfreeze: { from: ["FROZEN"], to: "ACTIVE" },
  close: { from: ["ACTIVE", "FROZEN"], to: "CLOSED" },
  reissue: { from: ["ACTIVE", "FROZEN"], to: null }
}

/** How a card path id that finds nothing is reported. */
export const CARD = { resource: "card", param: "card_id" } as const

/** The program's card with this path id (404 param card_id for malformed, unknown and other programs' ids). */
export const findCard = ({ store }: CardDeps, programId: string, cardId: string) =>
  findOwned(cardId, CARD, (id) => store.findCard(programId, id))

/**
 * A fresh number under the BIN, unused by any card of any program under any configured vault key,
 * sealed for the card's row, with a new code and expiry; a replacement's expiry is always later
 * than `replacing`'s.
 */
export const newSecrets = (
  deps: CardDeps,
  bin: string,
  cardId: string,
  replacing?: { readonly exp_month: number; readonly exp_year: number }
): Effect.Effect<CardSecrets, BusinessRuleViolation | SqlError.SqlError> =>
  Effect.gen(function* () {
    const { store, vault } = deps
    const now = yield* nowMs
    const expiry = replacing === undefined ? expiryFrom(now) : replacementExpiry(now, replacing)
    for (let attempt = 0; attempt < MAX_NUMBER_ATTEMPTS; attempt++) {
      const pan = generatePan(bin)
      if (yield* store.fingerprintTaken(vault.fingerprints(pan))) continue
      return {
        sealed: sealCard(deps, cardId, pan, generateCvv()),
        last_four: pan.slice(-4),
        ...expiry
      }
    }
    return yield* new BusinessRuleViolation({
      code: "card_number_space_exhausted",
      message: "No unused card number could be drawn under this program's BIN. Use a program with another BIN.",
      param: null
    })
  })

/** Issues a card on a wallet of the caller's program (404 param wallet_id otherwise); emits card.created. */
export const issueCard = (
  deps: CardDeps,
  caller: ProgramCaller,
  input: IssueCard
): Effect.Effect<Card, NotFound | BusinessRuleViolation | SqlError.SqlError> =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const programId = caller.program.id
      const { wallet } = yield* deps.ledger.walletAccount(programId, input.wallet_id)
      const cardholder = yield* cardholderForCard(deps.cardholders, programId, input.cardholder_id ?? wallet.cardholder_id)
      const id = newId()
      const secrets = yield* newSecrets(deps, caller.program.bin, id)
      const now = yield* nowIso
      const card: Card = {
        id,
        object: "card",
        program_id: programId,
        wallet_id: wallet.id,
        financial_account_id: wallet.financial_account_id,
        cardholder_id: cardholder?.id ?? null,
        type: input.type,
        state: "ACTIVE",
        last_four: secrets.last_four,
        exp_month: secrets.exp_month,
        exp_year: secrets.exp_year,
        allowed_mcc_codes: input.allowed_mcc_codes,
        blocked_mcc_codes: input.blocked_mcc_codes,
        allowed_merchant_countries: input.allowed_merchant_countries,
        blocked_merchant_countries: input.blocked_merchant_countries,
        spending_limits: input.spending_limits,
        spending_period: spendingPeriodOf(input.spending_limits),
        metadata: input.metadata ?? EMPTY_METADATA,
        created_at: now,
        updated_at: now
      }
      yield* deps.store.insertCard({ card, sealed: secrets.sealed })
      yield* deps.events.emit(programId, "card.created", card)
      return card
    })
  )

/**
 * Freeze, unfreeze, close or reissue by compare-and-set on the state, so of two concurrent changes
 * only one wins; 409 from an incompatible state; emits card.updated and publishes the change.
 */
export const changeLifecycle = (
  deps: CardDeps,
  caller: ProgramCaller,
  cardId: string,
  action: CardLifecycleAction
): Effect.Effect<Card, NotFound | Conflict | BusinessRuleViolation | SqlError.SqlError> =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const { store } = deps
      const programId = caller.program.id
      const current = yield* findCard(deps, programId, cardId)
      const rule = LIFECYCLE[action]
      const at = yield* nowIso
      const changed =
        action === "reissue"
          ? yield* store.replaceSecrets(
              programId,
              current.card.id,
              rule.from,
              yield* newSecrets(deps, caller.program.bin, current.card.id, current.card),
              at
            )
          : yield* store.transition(programId, current.card.id, rule.from, rule.to!, at)
      if (Option.isNone(changed)) {
        const now = yield* store.findCard(programId, current.card.id)
        const state = Option.match(now, { onNone: () => current.card.state, onSome: (record) => record.card.state })
        return yield* new Conflict({
          message: `Cannot ${action} a card in state ${state}; ${action} is allowed from ${rule.from.join(" or ")}.`,
          param: null
        })
      }
      // Outstanding display sessions showed the old number (reissue) or a card that no longer works (close).
      if (action === "reissue" || action === "close") yield* store.deleteEmbedSessions(current.card.id)
      // Every node's card cache lets go of the card at commit (docs/operations.md#running-several-nodes).
      yield* deps.feed.publish("card", current.card.id)
      yield* deps.events.emit(programId, "card.updated", changed.value.card)
      return changed.value.card
    })
  )
