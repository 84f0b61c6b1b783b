import { Context } from "effect"

/**
 * Marks an endpoint whose handler calls out to other systems (resend's synchronous delivery). Its
 * Idempotency-Key response is stored right after the handler instead of inside one transaction
 * with it, so no database transaction is held open across a network call.
 */
export class CallsOut extends Context.Tag("@issuing/http/CallsOut")<CallsOut, boolean>() {}
