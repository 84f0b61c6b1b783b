import * as crypto from "node:crypto"

/** Bytes of randomness in a new signing secret (Standard Webhooks asks for 24 to 64). */
export const SECRET_BYTES = 32
const PREFIX = "whsec_"

/** A new signing secret: `whsec_` + base64 of 32 random bytes (docs/webhooks.md, Subscriptions). */
export const newWebhookSecret = (): string => `${PREFIX}${crypto.randomBytes(SECRET_BYTES).toString("base64")}`

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
export const secretKey = (secret: string): Buffer => Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64")

/** One Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 over `id.timestamp.body`. */
export const signPayload = (key: Buffer, messageId: string, timestampSeconds: number, body: string): string =>
  `v1,${crypto.createHmac("sha256", key).update(`${messageId}.${timestampSeconds}.`).update(body).digest("base64")}`

/**
 * The `webhook-signature` header: one signature per active key, space-separated (the current key
 * first; during a rotation the previous key signs too, so receivers still holding it verify).
 */
export const signatureHeader = (keys: ReadonlyArray<Buffer>, messageId: string, timestampSeconds: number, body: string): string =>
  keys.map((key) => signPayload(key, messageId, timestampSeconds, body)).join(" ")
