import { Layer } from "effect"
import { Access } from "./access/Access.js"
import { RateLimiter } from "./access/RateLimiter.js"
import { Events } from "./events/Events.js"
import { Idempotency } from "./idempotency/Idempotency.js"

/** Every domain service; needs the stores, IssuingConfig and Vault. */
export type IssuingServices = Access | RateLimiter | Idempotency | Events

/** The domain services over whatever store is provided. */
export const ServicesLive = Layer.mergeAll(Access.Default, RateLimiter.Default, Idempotency.Default, Events.Default)
