import * as crypto from "node:crypto"
import type { Environment } from "../platform/IssuingConfig.js"

/** A new API key secret: `sk_sandbox_…` or `sk_live_…` followed by 192 random bits (base64url). */
export const newApiKeySecret = (environment: Environment): string =>
  `sk_${environment === "production" ? "live" : "sandbox"}_${crypto.randomBytes(24).toString("base64url")}`

/**
 * SHA-256 of a text's UTF-8 bytes, hex: Node's one-shot `crypto.hash` where it has it (20.12 and
 * later), which skips the Hash object: 3–5 µs against 15–17 µs a call
 * (docs/decisions.md#the-cost-of-a-request-on-the-api-node).
 */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === "function"
    ? (text) => crypto.hash("sha256", text, "hex")
    : (text) => crypto.createHash("sha256").update(text, "utf8").digest("hex")

/**
 * The stored form of a high-entropy secret (API keys, session tokens): its SHA-256. A slow hash
 * buys nothing for 192-bit random values and would cost every request, which hashes its key.
 */
export const hashSecret = (secret: string): string => sha256Hex(secret)

/**
 * Shortest secret a person may choose for the first admin key (ISSUING_BOOTSTRAP_API_KEY): it is
 * hashed like the random ones, so its length is what stands against guessing it from a leaked hash.
 */
export const MIN_CHOSEN_SECRET_LENGTH = 32

/** Only printable, reasonably sized bearer tokens are looked up. */
export const looksLikeSecret = (token: string): boolean => /^[\x21-\x7e]{8,256}$/.test(token)
