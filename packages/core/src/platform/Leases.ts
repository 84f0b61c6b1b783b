/**
 * The one rule for claims a process holds while it works on them — a webhook delivery being sent,
 * an Idempotency-Key whose request runs: a short lease, renewed while the holder lives, so another
 * node takes over a dead holder's claims within the lease (docs/operations.md#claims-and-leases).
 * A lease of 60 s (deliveries: twice the delivery timeout plus 5 s) kept a dead node's claims
 * for a minute: the client's retry with the same key met 409 all that time.
 */

/** A claim lasts this long past its holder's last renewal; then another node may take it over. */
export const CLAIM_LEASE_MS = 4000

/** How often a live holder renews its claims (three renewals may fail before the lease ends). */
export const CLAIM_RENEW_MS = 1000

/**
 * A holder whose claim was last confirmed (claimed or renewed) this long ago stops working under
 * it: a try in flight is abandoned, a request's response is not stored. The last second of the
 * lease covers the stop itself and clock drift between nodes (their clocks must agree within it).
 */
export const CLAIM_ABANDON_MS = 3000

/** A claimed piece of work is started only while its claim was confirmed at most this long ago. */
export const CLAIM_START_WITHIN_MS = CLAIM_ABANDON_MS - CLAIM_RENEW_MS
