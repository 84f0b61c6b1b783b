import type { Caller, ProgramCaller } from "@issuing/core"
import { Effect, Layer, Option } from "effect"
import { OrganizationScoped, ProgramScoped } from "../api/Security.js"
import { apiFailure } from "../errors.js"
import { currentAccess } from "./RequestPipeline.js"

// The pipeline resolves the caller of every scoped route before routing; without one, the route
// was reached some other way, and it is refused as unauthenticated.
const unauthenticated = apiFailure("authentication_error", "Authentication required.", null)

/** Hands the organization-scoped caller resolved by the request pipeline to the handler. */
export const OrganizationScopedLive = Layer.succeed(
  OrganizationScoped,
  Effect.flatMap(currentAccess, (access) =>
    Option.match(access, {
      onNone: () => Effect.fail(unauthenticated),
      onSome: (caller): Effect.Effect<Caller> => Effect.succeed(caller)
    })
  )
)

/** Hands the program-scoped caller resolved by the request pipeline to the handler. */
export const ProgramScopedLive = Layer.succeed(
  ProgramScoped,
  Effect.flatMap(currentAccess, (access) =>
    Option.isSome(access) && "program" in access.value ? Effect.succeed(access.value as ProgramCaller) : Effect.fail(unauthenticated)
  )
)
