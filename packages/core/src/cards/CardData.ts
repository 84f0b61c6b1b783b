import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import * as crypto from "node:crypto"
import { callerNoun, type ProgramCaller } from "../access/Records.js"
import { hashSecret } from "../access/Secrets.js"
import { AuthenticationFailed, Conflict, NotFound, PermissionDenied, type RateLimited } from "../platform/Errors.js"
import { newId } from "../platform/Ids.js"
import { nowIso, nowMs } from "../platform/Time.js"
import type { CardDeps } from "./CardDeps.js"
import { findCard } from "./Issuance.js"
import { checkPanSearchLimits } from "./PanSearchLimits.js"
import { missingKeyAdvice, sealCard, unseal } from "./Sealing.js"
import type { Card, CardAccessContext, CardAuditAction, CardDisplay, CardEmbedSession, CardRequestContext, CardReveal } from "./Records.js"

/** Bytes of randomness in an embed session token (256 bits). */
export const EMBED_TOKEN_BYTES = 32
/** Cards re-sealed per batch when rotating the vault key. */
export const RESEAL_BATCH_SIZE = 200

const invalidSession = () =>
  new AuthenticationFailed({ message: "The embed session_token is unknown or expired. Create a new embed session." })

/** True when text could be a token we issued (base64url of 32 bytes), so junk is never looked up. */
const looksLikeToken = (text: string) => /^[A-Za-z0-9_-]{43}$/.test(text)

/** Writes one audit record of an access to card data (in the caller's transaction). */
const audit = ({ store }: CardDeps, programId: string, cardId: string | null, action: CardAuditAction, context: CardAccessContext) =>
  Effect.flatMap(nowIso, (now) =>
    store.insertAudit({
      id: newId(),
      object: "card_audit_record",
      program_id: programId,
      api_key_id: context.apiKeyId,
      card_id: cardId,
      action,
      request_id: context.requestId,
      client_ip: context.clientIp,
      created_at: now
    })
  )

/** POST /v1/cards/{card_id}/reveal: number and code, for keys enabled for PAN reveal; audited. */
export const revealCard = (
  deps: CardDeps,
  caller: ProgramCaller,
  cardId: string,
  context: CardAccessContext
): Effect.Effect<CardReveal, PermissionDenied | NotFound | Conflict | SqlError.SqlError> =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      if (!caller.panReveal) {
        return yield* new PermissionDenied({ message: `${callerNoun(caller)} is not enabled for PAN reveal.`, param: null })
      }
      const record = yield* findCard(deps, caller.program.id, cardId)
      if (record.card.state === "CLOSED") {
        return yield* new Conflict({ message: "The card is CLOSED; its number can no longer be revealed.", param: null })
      }
      // The audit record commits before any plaintext leaves: no record, no reveal.
      yield* audit(deps, caller.program.id, record.card.id, "reveal", context)
      const { cvv, pan } = unseal(deps, record)
      return {
        object: "card_reveal",
        card_id: record.card.id,
        pan,
        exp_month: record.card.exp_month,
        exp_year: record.card.exp_year,
        cvv
      }
    })
  )

/**
 * POST /v1/cards/search-by-pan: the program's card with this number (by keyed fingerprint), for keys
 * enabled for PAN reveal (the body is a card number: PCI scope), within the key's search budget and
 * miss limit (429 past them); hits and misses audited.
 */
export const searchCardByPan = (
  deps: CardDeps,
  caller: ProgramCaller,
  pan: string,
  context: CardAccessContext
): Effect.Effect<Card, PermissionDenied | RateLimited | NotFound | SqlError.SqlError> =>
  Effect.gen(function* () {
    if (!caller.panReveal) {
      return yield* new PermissionDenied({
        message: `${callerNoun(caller)} is not enabled for PAN reveal, which search-by-pan requires.`,
        param: null
      })
    }
    const found = yield* deps.transactor.withTransaction(
      Effect.gen(function* () {
        yield* checkPanSearchLimits(deps, context.apiKeyId)
        // Numbers sealed before a key rotation are found by their fingerprint under the older key.
        const record = yield* deps.store.findByFingerprints(caller.program.id, deps.vault.fingerprints(pan))
        const cardId = Option.match(record, { onNone: () => null, onSome: (r) => r.card.id })
        yield* audit(deps, caller.program.id, cardId, "search_by_pan", context)
        return record
      })
    )
    return yield* Option.match(found, {
      onNone: () => Effect.fail(new NotFound({ message: "No card of this program has that number.", param: "pan" })),
      onSome: (record) => Effect.succeed(record.card)
    })
  })

/**
 * POST /v1/cards/{card_id}/embed-sessions: a short-lived token for the embed document (only its hash
 * is stored), for keys enabled for card display; audited.
 */
export const createEmbedSession = (
  deps: CardDeps,
  caller: ProgramCaller,
  cardId: string,
  context: CardAccessContext
): Effect.Effect<CardEmbedSession, PermissionDenied | NotFound | Conflict | SqlError.SqlError> =>
  deps.transactor.withTransaction(
    Effect.gen(function* () {
      const { config } = deps
      if (!caller.cardDisplay) {
        return yield* new PermissionDenied({
          message:
            caller.oauth === undefined
              ? "This API key is not enabled for card display."
              : "This access token is not enabled for card display: it needs the write scope.",
          param: null
        })
      }
      const record = yield* findCard(deps, caller.program.id, cardId)
      if (record.card.state === "CLOSED") {
        return yield* new Conflict({ message: "The card is CLOSED; it cannot be displayed.", param: null })
      }
      const token = crypto.randomBytes(EMBED_TOKEN_BYTES).toString("base64url")
      const nowMillis = yield* nowMs
      const createdAt = new Date(nowMillis).toISOString()
      const expiresAt = new Date(nowMillis + config.embedSessionTtlSeconds * 1000).toISOString()
      yield* deps.store.insertEmbedSession({
        id: newId(),
        program_id: caller.program.id,
        card_id: record.card.id,
        token_hash: hashSecret(token),
        api_key_id: context.apiKeyId,
        created_at: createdAt,
        expires_at: expiresAt
      })
      yield* audit(deps, caller.program.id, record.card.id, "embed_session", context)
      return {
        object: "card_embed_session",
        card_id: record.card.id,
        session_token: token,
        expires_at: expiresAt,
        embed_url: `${config.baseUrl}/v1/cards/embed?session_token=${token}`
      }
    })
  )

/**
 * GET /v1/cards/embed: the card data behind a session token, for the embed document. Missing,
 * malformed, unknown or expired tokens, tokens of a closed or reissued card, and tokens whose key
 * was revoked fail authentication (401). Audited under the key that created the session when it
 * `displays` (a GET; a HEAD checks the session and shows nothing, so it is not an embed_view).
 */
export const openEmbedSession = (
  deps: CardDeps,
  token: string | undefined,
  request: CardRequestContext,
  displays = true
): Effect.Effect<CardDisplay, AuthenticationFailed | SqlError.SqlError> =>
  token === undefined || !looksLikeToken(token)
    ? Effect.fail(invalidSession())
    : deps.transactor.withTransaction(
        Effect.gen(function* () {
          const { store } = deps
          const session = yield* store.findEmbedSession(hashSecret(token))
          if (Option.isNone(session)) return yield* invalidSession()
          if (Date.parse(session.value.expires_at) <= (yield* nowMs)) return yield* invalidSession()
          const record = yield* store.findCard(session.value.program_id, session.value.card_id)
          if (Option.isNone(record) || record.value.card.state === "CLOSED") return yield* invalidSession()
          const { card } = record.value
          if (displays) {
            yield* audit(deps, session.value.program_id, card.id, "embed_view", { ...request, apiKeyId: session.value.api_key_id })
          }
          const { cvv, pan } = unseal(deps, record.value)
          return { card_id: card.id, pan, cvv, exp_month: card.exp_month, exp_year: card.exp_year }
        })
      )

/**
 * Re-seals every card made under an older vault key (after rotating ISSUING_VAULT_KEY to `new,old`)
 * or sealed before ciphertexts were bound to their row, under the current key and bound; returns
 * how many cards were re-sealed. Safe to rerun. The count is taken from each batch's committed
 * result (a retried transaction counts once).
 */
export const resealWithCurrentKey = (deps: CardDeps): Effect.Effect<number, SqlError.SqlError> =>
  Effect.gen(function* () {
    const { store, transactor, vault } = deps
    let total = 0
    let afterId = ""
    for (;;) {
      const batch = yield* store.cardsToReseal(vault.currentKeyId, afterId, RESEAL_BATCH_SIZE)
      if (batch.length === 0) return total
      afterId = batch[batch.length - 1]!.card.id
      const done = yield* transactor.withTransaction(
        Effect.forEach(batch, (record) =>
          Effect.suspend(() => {
            const { cvv, pan } = unseal(deps, record)
            return store.reseal(record.card.id, record.sealed, sealCard(deps, record.card.id, pan, cvv))
          })
        )
      )
      total += done.filter(Boolean).length
    }
  })

/**
 * Whether this process can open the cards it holds: one card per vault key id in use is opened (a
 * sample, not every card). Each problem is one line naming the key and what to do; none → []. The
 * server refuses to start on any (a key dropped from ISSUING_VAULT_KEY would otherwise show up
 * only as failing reveals). Nothing of the card data reaches the message.
 */
export const vaultProblems = (deps: CardDeps): Effect.Effect<ReadonlyArray<string>, SqlError.SqlError> =>
  Effect.map(deps.store.sealedSamples, (samples) =>
    samples.flatMap((record) => {
      if (!deps.vault.hasKey(record.sealed.vault_key_id)) {
        return [missingKeyAdvice(`Card ${record.card.id} (and every card under the same key)`, record.sealed.vault_key_id)]
      }
      try {
        unseal(deps, record)
        return []
      } catch (error) {
        return [error instanceof Error ? error.message : String(error)]
      }
    })
  )
