import { Effect } from "effect"
import { PermissionDenied } from "../platform/Errors.js"
import type { Caller } from "./Records.js"

/**
 * Every /v1/network/* route needs the caller's `network` right, in sandbox and production alike
 * (docs/network.md): card network messages and rail outcomes come from the network and the bank
 * partner, never from a program's own keys. An OAuth access token never holds it. Refused: 403,
 * nothing written.
 */
export const requireNetworkRight = (caller: Caller): Effect.Effect<void, PermissionDenied> =>
  caller.network
    ? Effect.void
    : Effect.fail(
        new PermissionDenied({
          message:
            caller.oauth === undefined
              ? "This API key cannot send network messages or rail outcomes: it needs the network right."
              : "An access token cannot send network messages or rail outcomes: only an API key with the network right can.",
          param: null
        })
      )
