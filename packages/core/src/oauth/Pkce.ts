import * as crypto from "node:crypto"

/**
 * PKCE (RFC 7636) as docs/oauth.md states it: S256 only; the challenge is exactly 43 characters
 * of base64url (a SHA-256 without padding), the verifier 43 to 128 characters of the unreserved
 * set, and the comparison runs in constant time.
 */

const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/
const VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/

/** True when the text is a well-formed S256 code challenge. */
export const isCodeChallenge = (text: string): boolean => CHALLENGE_PATTERN.test(text)

/** True when the text is a well-formed code verifier. */
export const isCodeVerifier = (text: string): boolean => VERIFIER_PATTERN.test(text)

/** The S256 challenge of a verifier: base64url(SHA-256(verifier)) without padding. */
export const s256Challenge = (verifier: string): string => crypto.createHash("sha256").update(verifier, "ascii").digest("base64url")

/** True when the verifier's S256 equals the stored challenge; compared in constant time. */
export const verifierMatches = (verifier: string, challenge: string): boolean => {
  const computed = Buffer.from(s256Challenge(verifier), "ascii")
  const expected = Buffer.from(challenge, "ascii")
  // Both are 43 characters when the challenge was checked at /oauth/authorize; the length test
  // only guards timingSafeEqual, which throws on unequal lengths.
  return computed.length === expected.length && crypto.timingSafeEqual(computed, expected)
}

/** A new opaque OAuth secret with its prefix (`at_`, `rt_`, `ac_`, `cs_`): 256 random bits, base64url. */
export const newOAuthSecret = (prefix: "at" | "rt" | "ac" | "cs"): string => `${prefix}_${crypto.randomBytes(32).toString("base64url")}`

/** A new public client identifier. */
export const newClientId = (): string => `client_${crypto.randomBytes(12).toString("base64url")}`

/** Only printable ASCII client ids of bounded length reach the store (no NUL, which PostgreSQL text refuses). */
export const isPlausibleClientId = (text: string): boolean => /^[\x21-\x7e]{1,200}$/.test(text)

/** Compares two secrets' hashes in constant time (client secrets at the token endpoint). */
export const hashesEqual = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "utf8")
  const right = Buffer.from(b, "utf8")
  return left.length === right.length && crypto.timingSafeEqual(left, right)
}
