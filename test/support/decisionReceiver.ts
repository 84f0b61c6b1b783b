import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"

const RECEIVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "decision-receiver.mjs")

/** What the receiver process recorded of one request. */
export interface Received {
  readonly path: string
  /** The signature verified with the stock `standardwebhooks` package against a trusted secret. */
  readonly verified: boolean
  readonly signatures: number
  readonly body: any
  /** The client port of the connection it came on. */
  readonly port: number
}

/**
 * Starts test/support/decision-receiver.mjs in its own process: its URLs (the path picks the
 * answer), the secrets it verifies signatures with, and what it received.
 */
export const startDecisionReceiver = async () => {
  const child: ChildProcess = spawn(process.execPath, [RECEIVER], { stdio: ["ignore", "pipe", "inherit"] })
  const port = await new Promise<number>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once("line", (line) => resolve(Number(line)))
    child.once("exit", (code) => reject(new Error(`receiver exited with ${code}`)))
  })
  const base = `http://127.0.0.1:${port}`
  return {
    url: (mode: string) => `${base}${mode}`,
    trust: async (secrets: ReadonlyArray<string>) => {
      await fetch(`${base}/_secrets`, { method: "PUT", body: JSON.stringify(secrets) })
    },
    log: async (): Promise<Array<Received>> => (await fetch(`${base}/_log`)).json() as Promise<Array<Received>>,
    close: () => {
      child.kill("SIGTERM")
    }
  }
}
export type DecisionReceiver = Awaited<ReturnType<typeof startDecisionReceiver>>
