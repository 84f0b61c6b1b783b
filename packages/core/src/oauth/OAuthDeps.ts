import type { AccessStoreService } from "../access/AccessStore.js"
import type { ChangeFeedService } from "../changes/ChangeFeed.js"
import type { Events } from "../events/Events.js"
import type { IssuingSettings } from "../platform/IssuingConfig.js"
import type { TransactorService } from "../sql/Transactor.js"
import type { OAuthStoreService } from "./OAuthStore.js"

/** What the OAuth use cases work with, gathered once when the service is built. */
export interface OAuthDeps {
  readonly store: OAuthStoreService
  readonly access: AccessStoreService
  readonly transactor: TransactorService
  readonly config: IssuingSettings
  readonly feed: ChangeFeedService
  readonly events: Events
  /** Drops this process's cached access tokens of the grants (the published change retires them everywhere). */
  readonly forgetGrants: (grantIds: ReadonlyArray<string>) => void
}

/** An ISO timestamp `seconds` after `nowMs`. */
export const isoAfter = (nowMs: number, seconds: number): string => new Date(nowMs + seconds * 1000).toISOString()
