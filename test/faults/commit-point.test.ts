import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { type DecisionReceiver, startDecisionReceiver } from "../support/decisionReceiver.js"
import { ADMIN_KEY, bundleServer, type ServerBundle, type ServerProcess, serverEnv, startServer } from "./faultServer.js"
import { sleep } from "./scenario.js"

/**
 * A kill -9 between a real-time decision and its answer (issue 43, item 7; docs/api.md#idempotency).
 * An authorization or an increment under an Idempotency-Key asks the program's authorization
 * endpoint with nothing written, then posts and stores its answer in one transaction. The server
 * (test/faults/commitPointServer.ts, its own process) kills itself with SIGKILL at a point the test
 * arms for one key: as that request's answer is being stored, or right after it committed and
 * before it is sent. Restarted on the same database, a retry with the key gets either a fresh
 * single effect (nothing of the killed request was committed; after the claim's lease) or the
 * stored answer (`Idempotent-Replayed: true`) — never a second hold, on either store. The same for
 * card network messages, claimed by their network_message_id (issue 45, item 3).
 */

const AMOUNT = 1_000
const INCREMENT = 250
/** How long a retry keeps meeting 409 on the killed request's claim at most: its 4 s lease, and margin. */
const LEASE_WAIT_MS = 15_000

let bundle: ServerBundle
beforeAll(async () => {
  bundle = await bundleServer("test/faults/commitPointServer.ts")
})
afterAll(() => bundle?.dispose())

describe.each(STORE_KINDS)("a crash between the real-time decision and the answer on %s", (kind) => {
  let database: TestDatabase | undefined
  let server: ServerProcess | undefined
  let decisions: DecisionReceiver | undefined
  afterAll(async () => {
    await server?.kill()
    decisions?.close()
    await database?.drop()
  })

  it("leaves one hold per request: the retry gets a fresh single effect or the stored answer", async () => {
    database = await createTestDatabase(kind, { migrated: true })
    decisions = await startDecisionReceiver()
    const env = serverEnv(database.url)
    /** Starts the server, armed to crash at `at` on the request with `key`. */
    const startArmed = async (key: string, at: "storing" | "committed") => {
      server = await startServer(bundle, { ...env, COMMIT_POINT_CRASH_KEY: key, COMMIT_POINT_CRASH_AT: at })
    }
    let programId = ""
    const call = async (method: string, route: string, body?: unknown, idempotencyKey?: string) => {
      const response = await fetch(`${server!.url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${ADMIN_KEY}`,
          "x-program-id": programId,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000)
      })
      const text = await response.text()
      return { status: response.status, replayed: response.headers.get("idempotent-replayed"), text, body: JSON.parse(text) }
    }
    const ok = async (method: string, route: string, body?: unknown) => {
      const response = await call(method, route, body)
      expect(response.status, response.text).toBe(200)
      return response.body
    }
    /** Sends the armed request: the server dies before answering it. */
    const killedBy = async (route: string, body: unknown, key: string) => {
      await expect(call("POST", route, body, key)).rejects.toThrow()
      await server!.exited
      expect(server!.child.signalCode).toBe("SIGKILL")
    }
    /** Retries with the key while the killed request's claim holds it (409), up to its lease and margin. */
    const retry = async (route: string, body: unknown, key: string) => {
      const deadline = Date.now() + LEASE_WAIT_MS
      for (;;) {
        const response = await call("POST", route, body, key)
        if (response.status !== 409 || Date.now() > deadline) return response
        await sleep(250)
      }
    }
    const asked = async (cardId: string, kind: string) =>
      (await decisions!.log()).filter((received) => received.body?.data?.card?.id === cardId && received.body?.data?.kind === kind).length
    const keys = { held: crypto.randomUUID(), answered: crypto.randomUUID(), grown: crypto.randomUUID() }

    // 1. Armed for the first authorization: killed as its answer is stored.
    await startArmed(keys.held, "storing")
    programId = (await ok("GET", "/v1/programs")).data[0].id
    await ok("POST", "/v1/authorization-endpoints", { url: decisions.url("/approve"), timeout_ms: 5000 })
    const wallet = await ok("POST", "/v1/wallets", { holder: { name: "Crash holder" } })
    await ok("POST", "/v1/transfers", {
      payment_rail: "fednow_instant",
      amount: 100_000,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    const card = await ok("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
    const authorization = { card_id: card.id, amount: AMOUNT, mcc: "5411" }
    await killedBy("/v1/simulate/authorizations", authorization, keys.held)
    expect(await asked(card.id, "AUTHORIZATION")).toBe(1)

    // 2. Restarted (armed for the next request): nothing of the killed one was committed, so the
    // retry, once the claim's lease is over, runs afresh — asked again, one hold.
    await startArmed(keys.answered, "committed")
    const fresh = await retry("/v1/simulate/authorizations", authorization, keys.held)
    expect(fresh.status, fresh.text).toBe(200)
    expect(fresh.replayed).toBeNull()
    expect(fresh.body).toMatchObject({ status: "PENDING", pending_amount: AMOUNT })
    expect(await asked(card.id, "AUTHORIZATION")).toBe(2)
    expect((await ok("GET", `/v1/transactions?card_id=${card.id}`)).data.map((t: { id: string }) => t.id)).toEqual([fresh.body.id])
    const again = await call("POST", "/v1/simulate/authorizations", authorization, keys.held)
    expect([again.replayed, again.text]).toEqual(["true", fresh.text])

    // 3. Killed right after the answer committed, before sending it: the retry replays it at once.
    const second = { card_id: card.id, amount: AMOUNT + 1, mcc: "5411" }
    await killedBy("/v1/simulate/authorizations", second, keys.answered)
    await startArmed(keys.grown, "storing")
    const stored = await call("POST", "/v1/simulate/authorizations", second, keys.answered)
    expect(stored.status, stored.text).toBe(200)
    expect(stored.replayed).toBe("true")
    expect(stored.body).toMatchObject({ status: "PENDING", pending_amount: AMOUNT + 1 })
    expect(stored.text).toBe((await call("GET", `/v1/transactions/${stored.body.id}`)).text)
    expect(await asked(card.id, "AUTHORIZATION")).toBe(3)

    // 4. An increment killed as its answer is stored: the retry grows the hold once.
    const increment = `/v1/simulate/transactions/${fresh.body.id}/increment`
    await killedBy(increment, { amount: INCREMENT }, keys.grown)
    server = await startServer(bundle, env)
    const grown = await retry(increment, { amount: INCREMENT }, keys.grown)
    expect(grown.status, grown.text).toBe(200)
    expect(grown.body).toMatchObject({ authorized_amount: AMOUNT + INCREMENT, pending_amount: AMOUNT + INCREMENT })
    expect(grown.body.card_events.map((event: { type: string }) => event.type)).toEqual(["AUTHORIZATION", "INCREMENTAL_AUTHORIZATION"])
    expect(await asked(card.id, "INCREMENTAL_AUTHORIZATION")).toBe(2)

    // Two authorizations answered, two holds; the increment once; the books as they say.
    const transactions = (await ok("GET", `/v1/transactions?card_id=${card.id}`)).data as Array<{ id: string }>
    expect(transactions.map((t) => t.id).sort()).toEqual([fresh.body.id, stored.body.id].sort())
    const account = await ok("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
    expect([account.balance.amount, account.pending_balance.amount]).toEqual([100_000, 2 * AMOUNT + 1 + INCREMENT])
    await server.stop()
    expect(server.child.exitCode).toBe(0)
  }, 120_000)

  // The same crash points for card network messages (docs/network.md#exactly-once): the message is
  // claimed by its network_message_id (stored as `network_message:<id>`) before the program is asked.
  it("applies a network message once: a retransmission after the crash gets a fresh single effect or the stored answer", async () => {
    await server?.kill()
    await database?.drop()
    database = await createTestDatabase(kind, { migrated: true })
    decisions ??= await startDecisionReceiver()
    const env = serverEnv(database.url)
    const startArmed = async (messageId: string, at: "storing" | "committed") => {
      server = await startServer(bundle, { ...env, COMMIT_POINT_CRASH_KEY: `network_message:${messageId}`, COMMIT_POINT_CRASH_AT: at })
    }
    let programId = ""
    const call = async (method: string, route: string, body?: unknown, program: string | null = programId) => {
      const response = await fetch(`${server!.url}${route}`, {
        method,
        headers: {
          authorization: `Bearer ${ADMIN_KEY}`,
          ...(program === null ? {} : { "x-program-id": program }),
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000)
      })
      const text = await response.text()
      return { status: response.status, replayed: response.headers.get("idempotent-replayed"), text, body: JSON.parse(text) }
    }
    const ok = async (method: string, route: string, body?: unknown) => {
      const response = await call(method, route, body)
      expect(response.status, response.text).toBe(200)
      return response.body
    }
    const send = (message: unknown) => call("POST", "/v1/network/card-messages", message, null)
    const killedBy = async (message: unknown) => {
      await expect(send(message)).rejects.toThrow()
      await server!.exited
      expect(server!.child.signalCode).toBe("SIGKILL")
    }
    /** Retransmits while the killed delivery's claim holds the id (409), up to its lease and margin. */
    const retransmit = async (message: unknown) => {
      const deadline = Date.now() + LEASE_WAIT_MS
      for (;;) {
        const response = await send(message)
        if (response.status !== 409 || Date.now() > deadline) return response
        await sleep(250)
      }
    }
    const ids = { held: `msg-${crypto.randomUUID()}`, answered: `msg-${crypto.randomUUID()}`, grown: `msg-${crypto.randomUUID()}` }
    const ntid = `ntx-${crypto.randomUUID()}`

    // 1. Armed for the first authorization: killed as its answer is stored, after the program was asked.
    await startArmed(ids.held, "storing")
    programId = (await ok("GET", "/v1/programs")).data[0].id
    await ok("POST", "/v1/authorization-endpoints", { url: decisions.url("/approve"), timeout_ms: 5000 })
    const wallet = await ok("POST", "/v1/wallets", { holder: { name: "Crash holder" } })
    await ok("POST", "/v1/transfers", {
      payment_rail: "fednow_instant",
      amount: 100_000,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    const card = await ok("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
    const number = (await ok("POST", `/v1/cards/${card.id}/reveal`)).pan
    const asked = async (kind: string) =>
      (await decisions!.log()).filter((received) => received.body?.data?.card?.id === card.id && received.body?.data?.kind === kind).length
    const merchant = { acceptor_id: "ACQ-1", name: "Crash Cafe", mcc: "5812" }
    const authorization = {
      network_message_id: ids.held,
      type: "AUTHORIZATION",
      network_transaction_id: ntid,
      card: { number },
      amount: AMOUNT,
      currency: "USD",
      merchant
    }
    await killedBy(authorization)
    expect(await asked("AUTHORIZATION")).toBe(1)

    // 2. Restarted: nothing of the killed delivery was committed, so the retransmission, once the
    // claim's lease is over, runs afresh — asked again, one hold.
    await startArmed(ids.answered, "committed")
    const fresh = await retransmit(authorization)
    expect(fresh.status, fresh.text).toBe(200)
    expect(fresh.replayed).toBeNull()
    expect(fresh.body).toMatchObject({ result: "APPROVED", response_code: "00", approved_amount: AMOUNT })
    expect(await asked("AUTHORIZATION")).toBe(2)
    const again = await send(authorization)
    expect([again.replayed, again.text]).toEqual(["true", fresh.text])

    // 3. An increment killed right after its answer committed, before sending it: the retransmission
    // replays it at once, the hold grown once.
    const increment = {
      network_message_id: ids.answered,
      type: "INCREMENTAL_AUTHORIZATION",
      network_transaction_id: ntid,
      amount: INCREMENT,
      currency: "USD"
    }
    await killedBy(increment)
    await startArmed(ids.grown, "storing")
    const stored = await send(increment)
    expect(stored.status, stored.text).toBe(200)
    expect(stored.replayed).toBe("true")
    expect(stored.body).toMatchObject({ transaction_id: fresh.body.transaction_id, result: "APPROVED", approved_amount: INCREMENT })
    expect(await asked("INCREMENTAL_AUTHORIZATION")).toBe(1)

    // 4. A clearing killed as its answer is stored: the retransmission posts it once.
    const clearing = { network_message_id: ids.grown, type: "CLEARING", network_transaction_id: ntid, amount: AMOUNT, currency: "USD" }
    await killedBy(clearing)
    server = await startServer(bundle, env)
    const cleared = await retransmit(clearing)
    expect(cleared.status, cleared.text).toBe(200)
    expect(cleared.body).toMatchObject({ result: "ACKNOWLEDGED", approved_amount: AMOUNT })

    // One transaction, authorized once and grown once, cleared once; the books as they say.
    const transactions = (await ok("GET", `/v1/transactions?card_id=${card.id}`)).data as Array<any>
    expect(transactions.map((t) => t.id)).toEqual([fresh.body.transaction_id])
    expect(transactions[0].card_events.map((event: { type: string }) => event.type)).toEqual([
      "AUTHORIZATION",
      "INCREMENTAL_AUTHORIZATION",
      "CLEARING"
    ])
    const account = await ok("GET", `/v1/financial-accounts/${wallet.financial_account_id}`)
    expect([account.balance.amount, account.pending_balance.amount]).toEqual([100_000 - AMOUNT, 0])
    await server.stop()
    expect(server.child.exitCode).toBe(0)
  }, 120_000)
})
