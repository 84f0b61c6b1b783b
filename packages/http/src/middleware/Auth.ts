import type { Caller, ProgramCaller } from "@issuing/core"
import { Effect, FiberRef, Layer, Option } from "effect"
import { OrganizationAuth, ProgramAuth } from "../api/Security.js"
import { apiFailure } from "../errors.js"
import { CurrentAccess } from "./RequestPipeline.js"

const unauthenticated = apiFailure("authentication_error", "Authentication required.", null)

/** Hands the organization-scoped caller resolved by the request pipeline to the handler. */
export const OrganizationAuthLive = Layer.succeed(
  OrganizationAuth,
  Effect.flatMap(FiberRef.get(CurrentAccess), (access) =>
    Option.match(access, {
      onNone: () => Effect.fail(unauthenticated),
      onSome: (caller): Effect.Effect<Caller> => Effect.succeed(caller)
    })
  )
)

/** Hands the program-scoped caller resolved by the request pipeline to the handler. */
export const ProgramAuthLive = Layer.succeed(
  ProgramAuth,
  Effect.flatMap(FiberRef.get(CurrentAccess), (access) =>
    Option.isSome(access) && "program" in access.value ? Effect.succeed(access.value as ProgramCaller) : Effect.fail(unauthenticated)
  )
)
