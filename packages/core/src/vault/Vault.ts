import { Context, Layer } from "effect"
import * as crypto from "node:crypto"

/**
 * Encryption of sensitive values at rest (card numbers and codes, stored idempotent responses that
 * carry secrets) with AES-256-GCM, and keyed fingerprints (HMAC-SHA256) for lookups.
 *
 * The master key never encrypts directly: HKDF derives one subkey for encryption and one for
 * fingerprints, so the two uses cannot collide. Every ciphertext names the key that made it
 * (`v1.<keyId>.<nonce|ciphertext|tag>`), so the key can rotate: new values use the first key,
 * older values still decrypt with any configured key.
 *
 * A value sealed for a place (table, column, row id) is `v2.<keyId>.<…>` and carries the place in
 * its associated data: copied to another row or column it no longer decrypts (docs/card-data.md).
 */
export interface VaultService {
  /** The id of the key new values are encrypted under. */
  readonly currentKeyId: string
  /** Encrypts with a fresh 96-bit nonce under the current key, bound to `place` when given. */
  readonly encrypt: (plaintext: string, place?: SealedPlace) => string
  /**
   * Decrypts a value made by `encrypt` under any configured key; throws on tampering, and when a
   * bound value is read at another place (or with none). Unbound (`v1`) values read anywhere.
   */
  readonly decrypt: (sealed: string, place?: SealedPlace) => string
  /** True when `keyId` (a sealed value's second part) is one of the configured keys. */
  readonly hasKey: (keyId: string) => boolean
  /** The keyed fingerprint of a value under the current key. */
  readonly fingerprint: (value: string) => string
  /** The fingerprints of a value under every configured key, current first (for lookups during rotation). */
  readonly fingerprints: (value: string) => ReadonlyArray<string>
}

/**
 * A sealed value names a key that is not configured: the value is intact, the key was dropped from
 * ISSUING_VAULT_KEY (docs/operations.md#the-vault-key says how to add it back and re-seal).
 */
export class VaultKeyMissing extends Error {
  constructor(readonly keyId: string) {
    super(`Vault key ${keyId} is not configured`)
    this.name = "VaultKeyMissing"
  }
}

/** The key id a sealed value was made under (`v1`/`v2.<keyId>.…`), or undefined when it is not one. */
export const sealedKeyId = (sealed: string): string | undefined => {
  const [version, keyId] = sealed.split(".")
  return (version === "v1" || version === "v2") && keyId !== undefined && keyId !== "" ? keyId : undefined
}

/** Where a sealed value is stored; bound into its ciphertext as associated data. */
export interface SealedPlace {
  readonly table: string
  readonly column: string
  readonly rowId: string
}

// JSON keeps the parts unambiguous whatever they contain.
const associatedData = (keyId: string, place: SealedPlace | undefined) =>
  Buffer.from(place === undefined ? keyId : JSON.stringify([keyId, place.table, place.column, place.rowId]))

interface DerivedKey {
  readonly id: string
  readonly encryptionKey: Buffer
  readonly fingerprintKey: Buffer
}

const derive = (master: Buffer): DerivedKey => {
  if (master.length !== 32) throw new Error("A vault key must be 32 bytes")
  const id = crypto.createHash("sha256").update(master).digest("hex").slice(0, 8)
  const hkdf = (info: string) => Buffer.from(crypto.hkdfSync("sha256", master, Buffer.alloc(0), info, 32))
  return { id, encryptionKey: hkdf("issuing/vault/encryption/v1"), fingerprintKey: hkdf("issuing/vault/fingerprint/v1") }
}

/** Parses ISSUING_VAULT_KEY: one or more base64 32-byte keys separated by commas, current first. */
export const parseVaultKeys = (text: string): ReadonlyArray<Buffer> | string => {
  const parts = text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
  if (parts.length === 0) return "must hold at least one base64-encoded 32-byte key"
  const keys: Array<Buffer> = []
  for (const part of parts) {
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(part)) return "must be base64 of 32 bytes"
    const key = Buffer.from(part, "base64")
    if (key.length !== 32) return `must be base64 of 32 bytes (got ${key.length} bytes)`
    keys.push(key)
  }
  return keys
}

/** Builds a vault over master keys, the first being current. */
export const makeVault = (masterKeys: ReadonlyArray<Buffer>): VaultService => {
  if (masterKeys.length === 0) throw new Error("The vault needs at least one key")
  const keys = masterKeys.map(derive)
  const current = keys[0]!
  const byId = new Map(keys.map((key) => [key.id, key] as const))
  const hmac = (key: DerivedKey, value: string) => crypto.createHmac("sha256", key.fingerprintKey).update(value, "utf8").digest("hex")
  return {
    currentKeyId: current.id,
    encrypt(plaintext, place) {
      const nonce = crypto.randomBytes(12)
      const cipher = crypto.createCipheriv("aes-256-gcm", current.encryptionKey, nonce)
      cipher.setAAD(associatedData(current.id, place))
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
      const tag = cipher.getAuthTag()
      return `${place === undefined ? "v1" : "v2"}.${current.id}.${Buffer.concat([nonce, body, tag]).toString("base64")}`
    },
    decrypt(sealed, place) {
      const [version, keyId, payload] = sealed.split(".")
      if ((version !== "v1" && version !== "v2") || keyId === undefined || payload === undefined) {
        throw new Error("Unrecognised sealed value")
      }
      if (version === "v2" && place === undefined) throw new Error("A bound sealed value was read without its place")
      const key = byId.get(keyId)
      if (key === undefined) throw new VaultKeyMissing(keyId)
      const raw = Buffer.from(payload, "base64")
      const nonce = raw.subarray(0, 12)
      const tag = raw.subarray(raw.length - 16)
      const body = raw.subarray(12, raw.length - 16)
      const decipher = crypto.createDecipheriv("aes-256-gcm", key.encryptionKey, nonce)
      // Unbound values (sealed before binding) keep reading until `issuing vault reseal` binds them.
      decipher.setAAD(associatedData(key.id, version === "v2" ? place : undefined))
      decipher.setAuthTag(tag)
      return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8")
    },
    hasKey: (keyId) => byId.has(keyId),
    fingerprint: (value) => hmac(current, value),
    fingerprints: (value) => keys.map((key) => hmac(key, value))
  }
}

/** The vault in force. */
export class Vault extends Context.Tag("@issuing/core/Vault")<Vault, VaultService>() {
  /** A vault over the given master keys, the first being current. */
  static readonly layer = (masterKeys: ReadonlyArray<Buffer>): Layer.Layer<Vault> => Layer.sync(Vault, () => makeVault(masterKeys))
}
