import type { Api } from "../api.js"

/** What every view is given: the API client of the signed-in credential, and the program it acts in. */
export interface ViewContext {
  readonly api: Api
  readonly programId: string
  /**
   * Whether the credential is a sandbox key (`sk_sandbox_…`): only then does the console offer to
   * fund a wallet from outside (an inbound transfer a sandbox settles at once).
   */
  readonly sandbox: boolean
  /** Moves to another view (a hash route such as `/wallets/<id>`). */
  readonly navigate: (route: string) => void
  /** Draws the current view again, from the API. */
  readonly rerender: () => void
}
