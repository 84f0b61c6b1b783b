import { Context } from "effect"

/**
 * Marks an endpoint whose handler calls out to other systems (resend's synchronous delivery). Its
 * Idempotency-Key response is stored right after the handler instead of inside one transaction
 * with it, so no database transaction is held open across a network call.
 */
export class CallsOut extends Context.Tag("@issuing/http/CallsOut")<CallsOut, boolean>() {}

/**
 * Marks an endpoint that exists only in the sandbox (the simulations). In production the request
 * pipeline answers it, after authentication, exactly as an unknown URL — before its body is
 * decoded, so no input reveals that the route exists (docs/api.md).
 */
export class SandboxOnly extends Context.Tag("@issuing/http/SandboxOnly")<SandboxOnly, boolean>() {}
