import type { Api } from "../api.js"

/** What every view is given: the API client of the signed-in credential, and the program it acts in. */
export interface ViewContext {
  readonly api: Api
  readonly programId: string
}
