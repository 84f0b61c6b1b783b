import { HttpApiMiddleware } from "@effect/platform"
import type { Caller, ProgramCaller } from "@issuing/core"
import { Context, Schema } from "effect"
import { AuthenticationFailure, PermissionFailure, RateLimitFailure } from "../errors.js"

/** The authenticated caller of an organization-scoped operation. */
export class CurrentCaller extends Context.Tag("@issuing/http/CurrentCaller")<CurrentCaller, Caller>() {}

/** The authenticated caller of a program-scoped operation, with the program of X-Program-ID. */
export class CurrentProgram extends Context.Tag("@issuing/http/CurrentProgram")<CurrentProgram, ProgramCaller>() {}

/**
 * What the request pipeline answers, before routing, on a route that needs a caller: 401 (key or
 * token), 403 (role, scopes, program of X-Program-ID), 429 (rate limit). Declared on the scope
 * middlewares below so every operation of their groups lists them.
 */
const CallerFailures = Schema.Union(AuthenticationFailure, PermissionFailure, RateLimitFailure)

/**
 * Marks a group as organization-scoped (Authorization required, no X-Program-ID) and hands its
 * handlers the caller. It authenticates nothing: the request pipeline has resolved the caller from
 * the route's scope before the router runs (docs/architecture.md#the-request-pipeline).
 */
export class OrganizationScoped extends HttpApiMiddleware.Tag<OrganizationScoped>()("OrganizationScoped", {
  provides: CurrentCaller,
  failure: CallerFailures
}) {}

/** Marks a group as program-scoped (Authorization and X-Program-ID required) and hands its handlers the caller and program. */
export class ProgramScoped extends HttpApiMiddleware.Tag<ProgramScoped>()("ProgramScoped", {
  provides: CurrentProgram,
  failure: CallerFailures
}) {}
