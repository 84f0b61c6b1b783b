import { HttpApiMiddleware } from "@effect/platform"
import { Schema } from "effect"
import { AuthenticationFailure, PermissionFailure, RateLimitFailure } from "../errors.js"

/**
 * What the request pipeline answers, before routing, on a route that needs a caller: 401 (key or
 * token), 403 (role, scopes, program of X-Program-ID), 429 (rate limit). Declared on the scope
 * middlewares below so every operation of their groups lists them.
 */
const CallerFailures = Schema.Union(AuthenticationFailure, PermissionFailure, RateLimitFailure)

/**
 * Marks a group as organization-scoped (Authorization required, no X-Program-ID). It authenticates
 * nothing: the request pipeline has resolved the caller from the route's scope before the router
 * runs (docs/architecture.md#the-request-pipeline), and the handlers read it with `CurrentCaller`
 * (middleware/Scopes.ts). It provides no service: providing one copies the request's context
 * twice and costs ≈ 20 fiber operations a request (docs/decisions.md#the-cost-of-a-request-on-the-api-node).
 */
export class OrganizationScoped extends HttpApiMiddleware.Tag<OrganizationScoped>()("OrganizationScoped", {
  failure: CallerFailures
}) {}

/** Marks a group as program-scoped (Authorization and X-Program-ID required); its handlers read the caller and program with `CurrentProgram`. */
export class ProgramScoped extends HttpApiMiddleware.Tag<ProgramScoped>()("ProgramScoped", {
  failure: CallerFailures
}) {}
