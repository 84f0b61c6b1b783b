/**
 * The credential, kept for this tab only: in memory, and in sessionStorage so a reload of the tab
 * keeps the operator signed in. Never a cookie, never the URL, never logged (docs/console.md).
 */

const CREDENTIAL = "issuing.console.credential"
const PROGRAM = "issuing.console.program"

const storage = (): Storage | null => {
  try {
    return window.sessionStorage
  } catch {
    return null
  }
}

export const savedCredential = (): string | null => storage()?.getItem(CREDENTIAL) ?? null
export const saveCredential = (credential: string) => storage()?.setItem(CREDENTIAL, credential)
export const savedProgram = (): string | null => storage()?.getItem(PROGRAM) ?? null
export const saveProgram = (program: string) => storage()?.setItem(PROGRAM, program)
export const forget = () => {
  storage()?.removeItem(CREDENTIAL)
  storage()?.removeItem(PROGRAM)
}
