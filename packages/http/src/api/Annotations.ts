import type { BusinessRuleCode } from "@issuing/core"
import { Context } from "effect"

/**
 * Marks an endpoint whose handler calls out to other systems (a real-time authorization decision,
 * resend's and the test event's synchronous delivery). Under an Idempotency-Key its handler runs
 * outside any database transaction, so none is held open across a network call, and writes once
 * after the call at the request's commit point (IdempotentCommit), in one transaction with the
 * answer this endpoint makes of the value written (docs/api.md#idempotency).
 */
export class CallsOut extends Context.Tag("@issuing/http/CallsOut")<CallsOut, boolean>() {}

/**
 * Marks an endpoint that exists only in the sandbox (the simulations). In production it is left out
 * of the route table and of /openapi.json, so it is an unknown URL: the same 404 for any method,
 * key or body, and nothing reveals that the route exists (docs/api.md#errors).
 */
export class SandboxOnly extends Context.Tag("@issuing/http/SandboxOnly")<SandboxOnly, boolean>() {}

/**
 * Marks an OAuth protocol endpoint (docs/oauth.md): its body is `application/x-www-form-urlencoded`
 * (RFC 6749), so the request pipeline reads it within the size limit but leaves the JSON checks
 * out, and the handler answers every refusal in OAuth's own format, not the /v1 envelope.
 */
export class OAuthProtocol extends Context.Tag("@issuing/http/OAuthProtocol")<OAuthProtocol, boolean>() {}

/**
 * The scope an OAuth access token needs for an endpoint when it is not the method's own (GET: read,
 * anything else: write); the card reveal needs pan_reveal (docs/oauth.md#access-tokens-on-v1).
 */
export class RequiredScope extends Context.Tag("@issuing/http/RequiredScope")<RequiredScope, "read" | "write" | "pan_reveal">() {}

/**
 * The business rules (422 codes) an endpoint's handler can answer with, beside the endpoint that
 * declares its 422: the OpenAPI document lists exactly these under the operation's 422, each with
 * an example body (docs/api.md#openapi). Core's BusinessRuleViolation is not typed per service, so
 * the list is stated here rather than derived (docs/decisions.md#per-operation-error-codes); an
 * empty list marks a 422 declared only because a handler is shared with one that has rules, and
 * the document leaves that 422 out.
 */
export class BusinessRules extends Context.Tag("@issuing/http/BusinessRules")<BusinessRules, ReadonlyArray<BusinessRuleCode>>() {}
