import * as crypto from "node:crypto"
import type { Environment } from "../platform/IssuingConfig.js"

/** A new API key secret: `sk_sandbox_…` or `sk_live_…` followed by 192 random bits (base64url). */
export const newApiKeySecret = (environment: Environment): string =>
  `sk_${environment === "production" ? "live" : "sandbox"}_${crypto.randomBytes(24).toString("base64url")}`

/**
 * The stored form of a high-entropy secret (API keys, session tokens): its SHA-256. A slow hash
 * buys nothing for 192-bit random values and would cost every request.
 */
export const hashSecret = (secret: string): string => crypto.createHash("sha256").update(secret, "utf8").digest("hex")

/**
 * Shortest secret a person may choose for the first admin key (ISSUING_BOOTSTRAP_API_KEY): it is
 * hashed like the random ones, so its length is what stands against guessing it from a leaked hash.
 */
export const MIN_CHOSEN_SECRET_LENGTH = 32

/** Only printable, reasonably sized bearer tokens are looked up. */
export const looksLikeSecret = (token: string): boolean => /^[\x21-\x7e]{8,256}$/.test(token)
