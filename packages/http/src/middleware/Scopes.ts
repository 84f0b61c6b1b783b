import type { Caller, ProgramCaller } from "@issuing/core"
import { Effect, FiberRef, Layer } from "effect"
import { OrganizationScoped, ProgramScoped } from "../api/Security.js"
import { type ApiFailureAt, apiFailure } from "../errors.js"

/**
 * What the request pipeline resolved of a request before the router runs: its id, and on a scoped
 * route its caller, resolved for the route's scope (with the program of X-Program-ID on a
 * program-scoped route); null on a public route.
 */
export interface ResolvedRequest {
  readonly requestId: string
  readonly caller: Caller | ProgramCaller | null
}

/**
 * The request being handled, as the pipeline resolved it; null outside the pipeline. The pipeline
 * sets it on the request's fiber, which serves that request alone; the scope middlewares hand its
 * caller on to the handlers. A FiberRef set once, not a service provided around the router: that
 * copies the fiber's context, every service of the platform, and restores it after, ≈ 25 more
 * operations, one more FiberRef write and 15 KB more per request (docs/decisions.md#one-pipeline-before-the-router).
 */
export const currentResolvedRequest: FiberRef.FiberRef<ResolvedRequest | null> = FiberRef.unsafeMake<ResolvedRequest | null>(null)

const resolved = FiberRef.get(currentResolvedRequest)

/** The caller the pipeline resolved for the route's scope (organization or program); null when none was. */
export const currentResolvedCaller: Effect.Effect<Caller | ProgramCaller | null> = Effect.map(
  resolved,
  (request) => request?.caller ?? null
)

/** The id of the request being handled (for audit records); "" outside the pipeline. */
export const currentRequestId: Effect.Effect<string> = Effect.map(resolved, (request) => request?.requestId ?? "")

// The pipeline resolves the caller of every scoped route before routing; without one, the route
// was reached some other way, and it is refused as unauthenticated.
const unauthenticated = apiFailure("authentication_error", "Authentication required.", null)

/**
 * The caller of an organization-scoped operation, as the request pipeline resolved it; 401 when
 * none was (the route was reached some other way). Read from the request's fiber, not provided as
 * a service around the handler: that copies the request's context twice and costs ≈ 20 fiber
 * operations a request (docs/decisions.md#the-cost-of-a-request-on-the-api-node).
 */
export const CurrentCaller: Effect.Effect<Caller, ApiFailureAt<401>> = Effect.flatMap(resolved, (request) =>
  request?.caller != null ? Effect.succeed<Caller>(request.caller) : Effect.fail(unauthenticated)
)

/** The caller of a program-scoped operation, with the program of X-Program-ID, as the request pipeline resolved it; 401 when none was. */
export const CurrentProgram: Effect.Effect<ProgramCaller, ApiFailureAt<401>> = Effect.flatMap(resolved, (request) =>
  request?.caller != null && "program" in request.caller ? Effect.succeed(request.caller as ProgramCaller) : Effect.fail(unauthenticated)
)

/** Refuses an organization-scoped route reached without the caller the pipeline resolves (401). */
export const OrganizationScopedLive = Layer.succeed(OrganizationScoped, Effect.asVoid(CurrentCaller))

/** Refuses a program-scoped route reached without the caller and program the pipeline resolves (401). */
export const ProgramScopedLive = Layer.succeed(ProgramScoped, Effect.asVoid(CurrentProgram))
