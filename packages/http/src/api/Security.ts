import { HttpApiMiddleware } from "@effect/platform"
import type { Caller, ProgramCaller } from "@issuing/core"
import { Context } from "effect"
import { ApiFailure } from "../errors.js"

/** The authenticated caller of an organization-scoped operation. */
export class CurrentCaller extends Context.Tag("@issuing/http/CurrentCaller")<CurrentCaller, Caller>() {}

/** The authenticated caller of a program-scoped operation, with the program of X-Program-ID. */
export class CurrentProgram extends Context.Tag("@issuing/http/CurrentProgram")<CurrentProgram, ProgramCaller>() {}

/**
 * Marks a group as organization-scoped: Authorization required, no X-Program-ID. The request
 * pipeline authenticates before routing reaches the handler; this middleware hands the result over.
 */
export class OrganizationAuth extends HttpApiMiddleware.Tag<OrganizationAuth>()("OrganizationAuth", {
  provides: CurrentCaller,
  failure: ApiFailure
}) {}

/** Marks a group as program-scoped: Authorization and X-Program-ID required. */
export class ProgramAuth extends HttpApiMiddleware.Tag<ProgramAuth>()("ProgramAuth", {
  provides: CurrentProgram,
  failure: ApiFailure
}) {}
