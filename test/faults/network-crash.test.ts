import { CLAIM_LEASE_MS } from "@issuing/core"
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type StoreKind, type TestDatabase } from "../support/databases.js"
import { type DecisionReceiver, startDecisionReceiver } from "../support/decisionReceiver.js"
import { ADMIN_KEY, bundleServer, type ServerBundle, type ServerProcess, serverEnv, startServer } from "./faultServer.js"
import { checkInvariants, openStoreReader, TransferLog } from "./invariants.js"
import { apiCaller, Gate, sleep } from "./scenario.js"

/**
 * Crash under card network message load (issue 45, item 11; docs/network.md#exactly-once): 12
 * clients send what a gateway sends for purchases — an AUTHORIZATION, then its CLEARING, each with
 * a network_message_id of its own, on cards of a program with a real-time decision — while
 * `issuing serve` is killed with SIGKILL at random moments and restarted on the same database. A
 * message that got no answer, a 5xx or a 409 (the claim a killed process left, until its lease
 * runs out) is retransmitted with the same network_message_id and body, as a network does, until
 * answered; some answered ones are retransmitted once more. Then: every retransmission of an
 * answered message got the first answer; one transaction per network_transaction_id, with one
 * AUTHORIZATION and at most one CLEARING card event, exactly the approved ones (none acknowledged
 * and lost, none applied twice); the wallet's balance and pending balance are what the answers
 * say; and the fault suite's invariant check (books balanced, every transfer whole).
 */
const KILLS = Number(process.env.ISSUING_FAULTS_KILLS ?? "3")
const CLIENTS = 12
const CARDS = 8
const AMOUNT = 100
const FUNDING = 10_000_000
const KINDS = (process.env.ISSUING_FAULTS_STORES ?? STORE_KINDS.join(",")).split(",") as Array<StoreKind>

let bundle: ServerBundle
beforeAll(async () => {
  bundle = await bundleServer()
})
afterAll(() => bundle?.dispose())

/** One card message as its client keeps it, and how it ended. */
interface SentMessage {
  readonly body: Record<string, unknown>
  readonly bodyText: string
  /** Tries that got no answer (the connection cut by a kill), a 5xx, or a 409 on the message's claim. */
  lost: number
  failed: number
  held: number
  /** The first 200 answer's text, and the retransmissions' answers after it. */
  answer?: { readonly text: string; readonly body: any }
  replays: Array<{ readonly text: string; readonly replayed: string | null }>
}

describe.each(KINDS)("crash under card network message load on %s", (kind) => {
  let database: TestDatabase | undefined
  let server: ServerProcess | undefined
  let decisions: DecisionReceiver | undefined
  afterAll(async () => {
    await server?.kill()
    decisions?.close()
    await database?.drop()
  })

  it(`applies every message once and loses none acknowledged across ${KILLS} kill -9 of issuing serve`, async () => {
    const startedMs = Date.now()
    database = await createTestDatabase(kind, { migrated: true })
    decisions = await startDecisionReceiver()
    const env = serverEnv(database.url)
    server = await startServer(bundle, env)
    let programId: string | undefined
    const call = apiCaller(
      () => server!.url,
      ADMIN_KEY,
      () => programId
    )
    programId = (await call("GET", "/v1/programs")).body.data[0].id as string
    const endpoint = await call("POST", "/v1/authorization-endpoints", { url: decisions.url("/approve"), timeout_ms: 5000 })
    expect(endpoint.status, endpoint.text).toBe(200)
    const log = new TransferLog()
    const wallet = (await call("POST", "/v1/wallets", { holder: { name: "Network fault holder" } })).body
    const account = wallet.financial_account_id as string
    const funding = { payment_rail: "fednow_instant", amount: FUNDING, currency: "USD", to_financial_account_id: account }
    const funded = await call("POST", "/v1/transfers", { ...funding, description: "network-fault-funding" })
    expect(funded.status, funded.text).toBe(200)
    log.answered({ tag: "network-fault-funding", request: funding }, funded.status, funded.body)
    const numbers: Array<string> = []
    for (let i = 0; i < CARDS; i++) {
      const card = await call("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
      expect(card.status, card.text).toBe(200)
      numbers.push((await call("POST", `/v1/cards/${card.body.id}/reveal`)).body.pan)
    }

    const gate = new Gate()
    const messages: Array<SentMessage> = []
    /** The network's door: no program header, the card found by its number. */
    const post = async (bodyText: string) => {
      await gate.wait()
      const response = await fetch(`${server!.url}/v1/network/card-messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: bodyText,
        signal: AbortSignal.timeout(10_000)
      })
      return { status: response.status, replayed: response.headers.get("idempotent-replayed"), text: await response.text() }
    }
    /** Sends a message until it is answered 200, retransmitting the same bytes after every lost try, 5xx or 409. */
    const send = async (body: Record<string, unknown>): Promise<SentMessage> => {
      const message: SentMessage = { body, bodyText: JSON.stringify(body), lost: 0, failed: 0, held: 0, replays: [] }
      messages.push(message)
      // A claim a killed process left runs out one lease after the kill; the bound is far beyond it.
      const deadline = Date.now() + 30_000
      while (message.answer === undefined && Date.now() < deadline) {
        const sent = await post(message.bodyText).catch(() => undefined)
        if (sent === undefined) message.lost += 1
        else if (sent.status === 200) message.answer = { text: sent.text, body: JSON.parse(sent.text) }
        else if (sent.status === 409) message.held += 1
        else if (sent.status >= 500) message.failed += 1
        else throw new Error(`message ${String(body.network_message_id)} refused: ${sent.status} ${sent.text}`)
        if (message.answer === undefined) await sleep(sent?.status === 409 ? 250 : 50)
      }
      // Some answered messages are retransmitted once more: the first answer, replayed.
      if (message.answer !== undefined && (message.lost + message.failed + message.held > 0 || Math.random() < 0.1)) {
        const again = await post(message.bodyText).catch(() => undefined)
        if (again !== undefined && again.status === 200) message.replays.push({ text: again.text, replayed: again.replayed })
      }
      return message
    }
    const merchant = { acceptor_id: "FAULT-ACQ-1", name: "Fault Grocer", city: "Austin", country: "US", mcc: "5411" }
    let running = true
    const client = async () => {
      while (running) {
        const network_transaction_id = `ntx-${crypto.randomUUID()}`
        const common = { network_transaction_id, amount: AMOUNT, currency: "USD" }
        const number = numbers[Math.floor(Math.random() * numbers.length)]!
        const authorized = await send({
          network_message_id: `auth-${crypto.randomUUID()}`,
          type: "AUTHORIZATION",
          card: { number },
          merchant,
          ...common
        })
        if (authorized.answer?.body.result !== "APPROVED") continue
        // A purchase's clearing follows its authorization, now or a little later.
        if (Math.random() < 0.5) await sleep(Math.random() * 50)
        await send({ network_message_id: `clear-${crypto.randomUUID()}`, type: "CLEARING", ...common })
      }
    }
    const clients = Array.from({ length: CLIENTS }, client)
    for (let kill = 0; kill < KILLS; kill++) {
      await sleep(300 + Math.random() * 700)
      gate.close()
      await server.kill()
      server = await startServer(bundle, env)
      gate.open()
    }
    await sleep(300)
    // Every client finishes its purchase in flight: the last kill's claims run out one lease after it.
    running = false
    const settleBegan = Date.now()
    await Promise.all(clients)
    const settleMs = Date.now() - settleBegan
    expect(settleMs).toBeLessThan(CLAIM_LEASE_MS + 10_000)

    // Every message was answered, and every retransmission after the answer got that answer.
    const unanswered = messages.filter((message) => message.answer === undefined)
    expect(unanswered.map((message) => message.body.network_message_id)).toEqual([])
    const differing = messages.flatMap((message) =>
      message.replays
        .filter((replay) => replay.replayed !== "true" || replay.text !== message.answer!.text)
        .map((replay) => `${String(message.body.network_message_id)}: ${message.answer!.text} then ${replay.replayed} ${replay.text}`)
    )
    expect(differing).toEqual([])

    const authorizations = messages.filter((message) => message.body.type === "AUTHORIZATION")
    const approved = authorizations.filter((message) => message.answer!.body.result === "APPROVED")
    const clearings = messages.filter((message) => message.body.type === "CLEARING")
    expect(clearings.map((message) => message.answer!.body.result).filter((result) => result !== "ACKNOWLEDGED")).toEqual([])
    const clearedIds = new Set(clearings.map((message) => message.body.network_transaction_id))
    const figures = {
      messages: messages.length,
      approved: approved.length,
      declined: authorizations.length - approved.length,
      cleared: clearings.length,
      lostTries: messages.reduce((sum, message) => sum + message.lost, 0),
      failedTries: messages.reduce((sum, message) => sum + message.failed, 0),
      heldTries: messages.reduce((sum, message) => sum + message.held, 0),
      replaysCompared: messages.reduce((sum, message) => sum + message.replays.length, 0)
    }

    // One transaction per network transaction, exactly those approved (none lost, none twice).
    const db = await openStoreReader(database)
    try {
      const rows = await db.query<{ id: string; ntid: string; status: string }>(
        `SELECT id, network_transaction_id AS ntid, status FROM issuing_transactions WHERE network_transaction_id IS NOT NULL`
      )
      const byNtid = new Map<string, Array<string>>()
      for (const row of rows) byNtid.set(row.ntid, [...(byNtid.get(row.ntid) ?? []), row.id])
      expect([...byNtid].filter(([, ids]) => ids.length > 1)).toEqual([])
      expect([...byNtid.keys()].sort()).toEqual(approved.map((message) => String(message.body.network_transaction_id)).sort())
    } finally {
      await db.close()
    }
    // Each as its answers say: authorized once, cleared once when its clearing was acknowledged.
    const wrong: Array<string> = []
    for (const message of approved) {
      const id = message.answer!.body.transaction_id as string
      const read = await call("GET", `/v1/transactions/${id}`)
      const types = (read.body.card_events as Array<{ type: string }>).map((event) => event.type)
      const cleared = clearedIds.has(message.body.network_transaction_id)
      const wanted = cleared ? ["AUTHORIZATION", "CLEARING"] : ["AUTHORIZATION"]
      if (JSON.stringify(types) !== JSON.stringify(wanted)) wrong.push(`${id}: ${types.join(",")}, expected ${wanted.join(",")}`)
      const status = cleared ? "SETTLED" : "PENDING"
      if (read.body.status !== status) wrong.push(`${id}: ${read.body.status}, expected ${status}`)
    }
    expect(wrong).toEqual([])
    const held = approved.filter((message) => !clearedIds.has(message.body.network_transaction_id)).length
    const funds = await call("GET", `/v1/financial-accounts/${account}`)
    expect([funds.body.balance.amount, funds.body.pending_balance.amount]).toEqual([FUNDING - AMOUNT * clearings.length, AMOUNT * held])

    const report = await checkInvariants({ store: database, baseUrl: server.url, apiKey: ADMIN_KEY, programId, transfers: log })
    console.log(
      `crash under network message load on ${kind}: ${KILLS} kills, ${JSON.stringify(figures)}, settled in ${settleMs} ms, invariants ${JSON.stringify(report)}, ${((Date.now() - startedMs) / 1000).toFixed(1)} s`
    )
    // The kills happened under load: tries were lost and their retransmissions answered.
    expect(figures.lostTries + figures.failedTries).toBeGreaterThan(0)
    expect(figures.approved).toBeGreaterThan(0)
    expect(figures.cleared).toBeGreaterThan(0)
    await server.stop()
    expect(server.child.exitCode).toBe(0)
  }, 90_000)
})
