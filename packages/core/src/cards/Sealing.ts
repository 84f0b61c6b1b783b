import { type SealedPlace, VaultKeyMissing } from "../vault/Vault.js"
import type { CardDeps } from "./CardDeps.js"
import type { CardRecord, SealedCardData } from "./Records.js"

/** The table whose rows card ciphertexts are bound to. */
export const CARD_TABLE = "issuing_cards"

/** Where a card's number or code is stored: bound into its ciphertext, so it decrypts in that row and column only. */
export const cardPlace = (cardId: string, column: "pan_sealed" | "cvv_sealed"): SealedPlace => ({
  table: CARD_TABLE,
  column,
  rowId: cardId
})

/** Number and code of a card as sealed in its row; issuance, reissue and re-sealing write these. */
export const sealCard = ({ vault }: CardDeps, cardId: string, pan: string, cvv: string): SealedCardData => ({
  pan_sealed: vault.encrypt(pan, cardPlace(cardId, "pan_sealed")),
  cvv_sealed: vault.encrypt(cvv, cardPlace(cardId, "cvv_sealed")),
  pan_fingerprint: vault.fingerprint(pan),
  vault_key_id: vault.currentKeyId
})

/**
 * Number and code of a card, decrypted in their row. A ciphertext that does not decrypt there (moved
 * from another row or column, or altered) is a defect: the request fails with 500 and nothing is
 * shown; the log names the card, never the data. A ciphertext under a key that ISSUING_VAULT_KEY no
 * longer holds says which key is missing and what to do.
 */
export const unseal = ({ vault }: CardDeps, record: CardRecord): { readonly pan: string; readonly cvv: string } => {
  const open = (column: "pan_sealed" | "cvv_sealed") => {
    try {
      return vault.decrypt(record.sealed[column], cardPlace(record.card.id, column))
    } catch (error) {
      if (error instanceof VaultKeyMissing) throw new Error(missingKeyAdvice(`Card ${record.card.id}`, error.keyId))
      throw new Error(`The sealed ${column} of card ${record.card.id} does not decrypt in its row (moved or altered)`)
    }
  }
  return { pan: open("pan_sealed"), cvv: open("cvv_sealed") }
}

/** What to do when stored data names a vault key that is not configured (docs/operations.md#the-vault-key). */
export const missingKeyAdvice = (what: string, keyId: string) =>
  `${what} is sealed under vault key ${keyId}, which ISSUING_VAULT_KEY does not hold: add that key after the current one ` +
  "(ISSUING_VAULT_KEY=<current key>,<key " +
  keyId +
  ">), start again, and run `issuing vault reseal` to move everything to the current key before removing it"
