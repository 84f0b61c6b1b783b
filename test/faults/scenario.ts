import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { type InvariantReport, openStoreReader, type StoreLocation, TransferLog } from "./invariants.js"

/** What the fault scenarios share: calls to the API, a funded set of wallets, and the claims a dead process left. */

export type Call = (method: string, route: string, body?: unknown) => Promise<{ status: number; body: any; text: string }>

/** Calls `baseUrl()` (the server may move to a new port on restart) with the admin key and program. */
export const apiCaller =
  (baseUrl: () => string, apiKey: string, programId: () => string | undefined): Call =>
  async (method, route, body) => {
    const program = programId()
    const response = await fetch(`${baseUrl()}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(program === undefined ? {} : { "x-program-id": program }),
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000)
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text), text }
  }

/** The transfer events a scenario's receiver subscribes to. */
const TRANSFER_EVENTS = ["transfer.created", "transfer.settled", "transfer.settled.instant"]

/**
 * Where every transfer scenario starts: the server's program, a subscription of the transfer
 * events to the receiver, and `wallets` funded wallets (their funding logged for the check).
 */
export const prepareTransferScenario = async (baseUrl: () => string, apiKey: string, receiverUrl: string, wallets: number) => {
  let programId: string | undefined
  const call = apiCaller(baseUrl, apiKey, () => programId)
  programId = (await call("GET", "/v1/programs")).body.data[0].id as string
  const subscription = await call("POST", "/v1/webhook-subscriptions", { url: receiverUrl, event_types: TRANSFER_EVENTS })
  if (subscription.status !== 200) throw new Error(`the scenario's subscription was refused: ${subscription.text}`)
  const log = new TransferLog()
  const accounts = await fundedWallets(call, log, wallets)
  return { call, programId, subscriptionId: subscription.body.id as string, log, accounts }
}

/** Creates `count` wallets and funds each by an inbound FedNow transfer (logged); returns their accounts. */
export const fundedWallets = async (call: Call, log: TransferLog, count: number, amount = 100_000): Promise<Array<string>> => {
  const accounts: Array<string> = []
  for (let i = 0; i < count; i++) {
    const wallet = await call("POST", "/v1/wallets", { holder: { name: `Fault holder ${i}` } })
    if (wallet.status !== 200) throw new Error(`wallet: ${wallet.status} ${wallet.text}`)
    accounts.push(wallet.body.financial_account_id)
    const request = { payment_rail: "fednow_instant", amount, currency: "USD", to_financial_account_id: wallet.body.financial_account_id }
    const tag = `fund-${crypto.randomUUID()}`
    const funded = await call("POST", "/v1/transfers", { ...request, description: tag })
    if (funded.status !== 200) throw new Error(`funding: ${funded.status} ${funded.text}`)
    log.answered({ tag, request }, funded.status, funded.body)
  }
  return accounts
}

/**
 * The Idempotency-Keys whose claim is unfinished (no stored response): read only. A claim a killed
 * process left stays until its lease runs out, within 4 s (docs/api.md#idempotency), and a retry
 * with its key gets 409 until then; the scenarios leave those claims as they are (nothing ages them).
 */
export const unfinishedClaimKeys = async (store: StoreLocation): Promise<Set<string>> => {
  const db = await openStoreReader(store)
  try {
    const rows = await db.query<{ idempotency_key: string }>(
      `SELECT idempotency_key FROM issuing_idempotency_keys WHERE status_code IS NULL`
    )
    return new Set(rows.map((row) => String(row.idempotency_key)))
  } finally {
    await db.close()
  }
}

/** Sleeps. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A gate the load's clients wait at while the server is down. */
export class Gate {
  #open: Promise<void> = Promise.resolve()
  #release: (() => void) | undefined
  /** Resolves at once while open. */
  readonly wait = (): Promise<void> => this.#open
  close(): void {
    if (this.#release !== undefined) return
    this.#open = new Promise((resolve) => (this.#release = resolve))
  }
  open(): void {
    this.#release?.()
    this.#release = undefined
  }
}

/** One scenario run's figures, for `npm run bench -- faults` (a JSON line in ISSUING_FAULTS_REPORT, when set). */
export interface ScenarioFigures {
  readonly scenario: string
  readonly store: string
  /** What was broken, and how many times. */
  readonly faults: string
  readonly sent: number
  readonly answered: Record<string, number>
  readonly lost: number
  readonly timedOut: number
  readonly retried: number
  readonly replaysCompared: number
  readonly slowestMs: number
  readonly invariants: InvariantReport
  readonly wallSeconds: number
}

/** Appends a run's figures to ISSUING_FAULTS_REPORT (no-op without it). */
export const reportFigures = (figures: ScenarioFigures): void => {
  const file = process.env.ISSUING_FAULTS_REPORT
  if (file !== undefined && file !== "") fs.appendFileSync(file, `${JSON.stringify(figures)}\n`)
}
