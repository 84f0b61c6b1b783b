import { Effect, Layer } from "effect"
import { DelegatedAccess } from "../access/DelegatedAccess.js"
import { ChangeFeed } from "../changes/ChangeFeed.js"
import { Events } from "../events/Events.js"
import { accessTokenResolver } from "./AccessTokenCallers.js"
import { revokeGrants } from "./Grants.js"
import { OAuthStore } from "./OAuthStore.js"

/** Access's `DelegatedAccess` port over the OAuth store: access tokens and a key's grants. */
export const OAuthDelegatedAccessLive = Layer.effect(
  DelegatedAccess,
  Effect.gen(function* () {
    const store = yield* OAuthStore
    const events = yield* Events
    const feed = yield* ChangeFeed
    return {
      resolveAccessToken: accessTokenResolver(store),
      revokeGrantsOfKey: (apiKeyId, at, forgetGrants) =>
        Effect.asVoid(revokeGrants({ store, events, feed, forgetGrants }, { apiKeyId }, at))
    }
  })
)
