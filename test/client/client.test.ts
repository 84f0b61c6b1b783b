import { FetchHttpClient } from "@effect/platform"
import {
  AuthenticationError,
  type BalanceUpdatedEvent,
  BusinessRuleError,
  type CardEvent,
  ConflictError,
  ConnectionError,
  InternalServerError,
  InvalidRequestError,
  IssuingApiError,
  IssuingClient,
  NotFoundError,
  RateLimitError,
  TimeoutError,
  WebhookVerificationError
} from "@issuing/client"
import { ApiFailure, type EffectClient, IssuingApiClient, layer as effectClientLayer, makeEffectClient } from "@issuing/client/effect"
import { Effect, Either } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform, uuid } from "../support/platform.js"
import { startReceiver } from "../webhooks/receiver.js"
import { type FlakyProxy, startFlakyProxy } from "./proxy.js"

// The plain client and the Effect client against a real platform on each store; the retry paths
// through a node:http proxy in front of it that fails the first tries in the ways networks do.

describe.each(STORE_KINDS)("@issuing/client on %s", (kind) => {
  let platform: TestPlatform
  let client: IssuingClient

  beforeAll(async () => {
    platform = await startPlatform(kind)
    client = new IssuingClient({ apiKey: platform.org.api_key, baseUrl: platform.baseUrl, programId: platform.org.program_id })
  })
  afterAll(async () => {
    await platform?.close()
  })

  const fundedWallet = async (amount: number) => {
    const wallet = await client.wallets.create({ holder: { name: "Ada Lovelace" } })
    await client.transfers.create({
      paymentRail: "fednow_instant",
      amount,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    return wallet
  }

  it("creates and reads resources: wallet, transfer, card, reveal, balances", async () => {
    const wallet = await fundedWallet(5_000)
    expect(wallet.object).toBe("wallet")
    expect(await client.wallets.retrieve(wallet.id)).toEqual(wallet)
    const account = await client.financialAccounts.retrieve(wallet.financial_account_id)
    expect(account.balance).toEqual({ amount: 5_000, currency: "USD" })
    const balances = await client.financialAccounts.balances(wallet.financial_account_id)
    expect(balances.data.map((balance) => balance.book).sort()).toEqual(["cash", "principal"])

    const card = await client.cards.create({ wallet_id: wallet.id, type: "VIRTUAL" })
    expect(card.object).toBe("card")
    const revealed = await client.cards.reveal(card.id)
    expect(revealed.pan.endsWith(card.last_four)).toBe(true)
    expect((await client.cards.freeze(card.id)).state).toBe("FROZEN")
    const programs = await client.programs.list()
    expect(programs.data.map((program) => program.id)).toContain(platform.org.program_id)
  })

  it("auto-paginates with for await: every item once, in the list's order; await gives one page", async () => {
    const wallet = await fundedWallet(100)
    const created: Array<string> = []
    for (let i = 0; i < 12; i++) created.push((await client.cards.create({ wallet_id: wallet.id, type: "VIRTUAL" })).id)
    const seen: Array<string> = []
    for await (const card of client.cards.list({ wallet_id: wallet.id, page_size: 5, order_by: "created_at", ascending: true })) {
      seen.push(card.id)
    }
    expect(seen).toEqual(created)
    const firstPage = await client.cards.list({ wallet_id: wallet.id, page_size: 5 })
    expect(firstPage.total_count).toBe(12)
    expect(firstPage.data).toHaveLength(5)
    // Newest first without order_by.
    expect(firstPage.data[0]!.id).toBe(created.at(-1))
    expect(await client.cards.list({ wallet_id: wallet.id, page: 3, page_size: 5 }).then((page) => page.data.length)).toBe(2)
    expect((await client.cards.list({ wallet_id: wallet.id }).toArray()).length).toBe(12)
    // Each next page follows the last item seen (starting_after): cards created while iterating
    // newest first sort before the walk and neither repeat an item nor push one out of it.
    const walked: Array<string> = []
    for await (const card of client.cards.list({ wallet_id: wallet.id, page_size: 5 })) {
      walked.push(card.id)
      if (walked.length % 5 === 1) await client.cards.create({ wallet_id: wallet.id, type: "VIRTUAL" })
    }
    expect(walked).toEqual([...created].reverse())
    // starting_after is a list parameter of its own: the page after a given item.
    const after = await client.cards.list({ wallet_id: wallet.id, order_by: "created_at", page_size: 3, starting_after: created[4] })
    expect(after.data.map((card) => card.id)).toEqual(created.slice(5, 8))
  })

  it("throws typed errors carrying the envelope: type, code, param, request_id", async () => {
    const missing = await client.wallets.retrieve(uuid()).catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(NotFoundError)
    expect(missing).toMatchObject({ status: 404, type: "not_found_error", code: "not_found", param: "wallet_id" })
    expect((missing as NotFoundError).requestId).toMatch(/^[0-9a-f-]{36}$/)

    const wallet = await fundedWallet(10)
    const broke = await client.transfers
      .create({
        paymentRail: "book",
        amount: 11,
        currency: "USD",
        from_financial_account_id: wallet.financial_account_id,
        to_financial_account_id: (await fundedWallet(1)).financial_account_id
      })
      .catch((error: unknown) => error)
    expect(broke).toBeInstanceOf(BusinessRuleError)
    expect(broke).toMatchObject({ status: 422, code: "insufficient_funds", param: "amount" })

    const invalid = await client.wallets.create({ holder: { name: "" } }).catch((error: unknown) => error)
    expect(invalid).toBeInstanceOf(InvalidRequestError)
    expect(invalid).toMatchObject({ status: 400, code: "invalid_request", param: "holder.name" })

    const stranger = new IssuingClient({ apiKey: "sk_sandbox_nobody", baseUrl: platform.baseUrl, programId: platform.org.program_id })
    const refused = await stranger.wallets.list().catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(AuthenticationError)
    expect(refused).toBeInstanceOf(IssuingApiError)
    // The key is never echoed back into the error.
    expect(JSON.stringify({ ...(refused as object), message: (refused as Error).message })).not.toContain("sk_sandbox_nobody")
  })

  it("sends an Idempotency-Key on every POST and replays a given one", async () => {
    const key = uuid()
    const first = await client.wallets.create({ holder: { name: "Once" } }, { idempotencyKey: key })
    const again = await client.wallets.create({ holder: { name: "Once" } }, { idempotencyKey: key })
    expect(again.id).toBe(first.id)
  })

  it("verifies a real webhook delivery (Standard Webhooks) and refuses a tampered or stale one", async () => {
    const receiver = await startReceiver()
    try {
      const subscription = await client.webhooks.create({ url: receiver.url, event_types: ["wallet.created"] })
      const wallet = await client.wallets.create({ holder: { name: "Hooked" } })
      const event = (await client.events.list({ type: "wallet.created", page_size: 1 })).data[0]!
      expect((event.data as { object: { id: string } }).object.id).toBe(wallet.id)
      // Resend makes its first try synchronously: the receiver has it when the call returns.
      await client.events.resend(event.id, { subscription_id: subscription.id })
      await receiver.waitFor((received) => received.some((request) => request.id === event.id))
      const delivery = receiver.received.find((request) => request.id === event.id)!

      const verified = client.webhooks.verify(delivery.body, delivery.headers, subscription.secret)
      expect(verified.id).toBe(event.id)
      expect(verified.type).toBe("wallet.created")
      // Node's IncomingHttpHeaders and a Fetch Headers object work alike; so do bytes.
      expect(client.webhooks.verify(new TextEncoder().encode(delivery.body), new Headers(delivery.headers), subscription.secret).id).toBe(
        event.id
      )

      expect(() => client.webhooks.verify(delivery.body.replace("Hooked", "Hacked"), delivery.headers, subscription.secret)).toThrow(
        WebhookVerificationError
      )
      const other = await client.webhooks.create({ url: receiver.url, event_types: ["card.created"] })
      expect(() => client.webhooks.verify(delivery.body, delivery.headers, other.secret)).toThrow(WebhookVerificationError)
      const stale = { ...delivery.headers, "webhook-timestamp": String(Math.floor(Date.now() / 1000) - 3600) }
      expect(() => client.webhooks.verify(delivery.body, stale, subscription.secret)).toThrow(WebhookVerificationError)
    } finally {
      await receiver.close()
    }
  })

  it("sends a test event (typed webhook.test) and creates an endpoint portal session", async () => {
    const receiver = await startReceiver()
    try {
      const subscription = await client.webhooks.create({ url: receiver.url, event_types: ["card.created"], tag: "client-customer" })
      expect(subscription.tag).toBe("client-customer")
      const attempt = await client.webhooks.sendTest(subscription.id)
      expect(attempt).toMatchObject({ object: "webhook_attempt", webhook_subscription_id: subscription.id, status: "SUCCESS" })
      const delivery = receiver.received.find((request) => request.id === attempt.event_id)!
      const event = client.webhooks.verify(delivery.body, delivery.headers, subscription.secret)
      expect(event.type === "webhook.test" && event.data.object.id).toBe(subscription.id)
      expect((await client.webhooks.list({ tag: "client-customer" })).data.map((s) => s.id)).toEqual([subscription.id])

      const session = await client.webhooks.createPortalSession({ scope_tag: "client-customer", allowed_event_types: ["card.created"] })
      expect(session).toMatchObject({
        object: "webhook_portal_session",
        scope_tag: "client-customer",
        allowed_event_types: ["card.created"]
      })
      expect(new URL(session.url).searchParams.get("session_token")).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect((await client.webhooks.createPortalSession()).scope_tag).toMatch(/^portal_/)
    } finally {
      await receiver.close()
    }
  })

  it("card transactions: a hold, an increment, a partial clearing, a reversal, expire and a return, typed, with their errors", async () => {
    const wallet = await fundedWallet(10_000)
    const card = await client.cards.create({ wallet_id: wallet.id, type: "VIRTUAL" })
    const held = await client.simulate.authorization({ card_id: card.id, amount: 3_000, mcc: "5411", merchant_name: "Grocer" })
    expect(held).toMatchObject({ status: "PENDING", authorized_amount: 3_000, pending_amount: 3_000, settled_amount: 0 })
    const account = await client.financialAccounts.retrieve(wallet.financial_account_id)
    expect([account.balance.amount, account.pending_balance.amount, account.available_balance.amount]).toEqual([10_000, 3_000, 7_000])

    expect((await client.simulate.increment(held.id, { amount: 500 })).pending_amount).toBe(3_500)
    expect(await client.simulate.clearing(held.id, { amount: 1_000, final: false })).toMatchObject({
      status: "PENDING",
      pending_amount: 2_500,
      settled_amount: 1_000
    })
    const tooMuch = await client.simulate.reversal(held.id, { amount: 2_501 }).catch((error: unknown) => error)
    expect(tooMuch).toBeInstanceOf(BusinessRuleError)
    expect(tooMuch).toMatchObject({ status: 422, code: "amount_exceeds_pending", param: "amount" })
    expect((await client.simulate.reversal(held.id, { amount: 500 })).pending_amount).toBe(2_000)
    expect(await client.transactions.expire(held.id)).toMatchObject({ status: "SETTLED", pending_amount: 0, settled_amount: 1_000 })
    const expiredTwice = await client.transactions.expire(held.id).catch((error: unknown) => error)
    expect(expiredTwice).toBeInstanceOf(ConflictError)
    expect(expiredTwice).toMatchObject({ status: 409 })
    const overRefund = await client.simulate.return(held.id, { amount: 1_001 }).catch((error: unknown) => error)
    expect(overRefund).toMatchObject({ status: 422, code: "amount_exceeds_settled", param: "amount" })
    const refunded = await client.simulate.return(held.id, { amount: 400 })
    expect(refunded.settled_amount).toBe(600)
    const messages: Array<CardEvent["type"]> = refunded.card_events.map((event) => event.type)
    expect(messages).toEqual([
      "AUTHORIZATION",
      "INCREMENTAL_AUTHORIZATION",
      "CLEARING",
      "AUTHORIZATION_REVERSAL",
      "AUTHORIZATION_EXPIRY",
      "RETURN"
    ])
    expect(await client.transactions.retrieve(held.id)).toEqual(refunded)

    // Bodies are optional where every field is: a clearing of the whole hold.
    const second = await client.simulate.authorization({ card_id: card.id, amount: 200, mcc: "5411" })
    expect(await client.simulate.clearing(second.id)).toMatchObject({ status: "SETTLED", pending_amount: 0, settled_amount: 200 })
    // balance.updated carries the account as it stands after the change.
    const [newest] = (await client.events.list({ type: "balance.updated", page_size: 1 })).data as Array<BalanceUpdatedEvent>
    const after = await client.financialAccounts.retrieve(wallet.financial_account_id)
    expect(after.balance.amount).toBe(10_000 - 1_000 + 400 - 200)
    expect(newest!.data.object).toEqual(after)
  })

  it("the Effect client has the card messages: clearing, and a 409 from expire on a settled transaction", async () => {
    const wallet = await fundedWallet(1_000)
    const card = await client.cards.create({ wallet_id: wallet.id, type: "VIRTUAL" })
    const program = Effect.gen(function* () {
      const api = yield* makeEffectClient({ baseUrl: platform.baseUrl, apiKey: platform.org.api_key, programId: platform.org.program_id })
      const held = yield* api.simulateAuthorizations.create({ payload: { card_id: card.id, amount: 300, mcc: "5411" } })
      const cleared = yield* api.simulateTransactions.clearing({ path: { transaction_id: held.id }, payload: { amount: 350 } })
      const expired = yield* Effect.flip(api.transactions.expire({ path: { transaction_id: held.id } }))
      return { held, cleared, expired }
    })
    const { cleared, expired, held } = await Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer)))
    expect(held.status).toBe("PENDING")
    // Over the hold (a tip): the excess posts too.
    expect(cleared).toMatchObject({ status: "SETTLED", pending_amount: 0, settled_amount: 350 })
    expect(expired).toMatchObject({ _tag: "ApiFailure", status: 409 })
    expect((await client.financialAccounts.retrieve(wallet.financial_account_id)).available_balance.amount).toBe(650)
  })

  it("manages the program's authorization endpoint: create with its secret, 409 for a second, list, update, rotate, delete", async () => {
    const created = await client.authorizationEndpoints.create({ url: "http://127.0.0.1:9/decide", timeout_ms: 500 })
    expect(created).toMatchObject({ object: "authorization_endpoint", timeout_ms: 500, timeout_decision: "DECLINE", disabled: false })
    expect(created.secret).toMatch(/^whsec_/)
    await expect(client.authorizationEndpoints.create({ url: "http://127.0.0.1:9/other" })).rejects.toBeInstanceOf(ConflictError)
    expect((await client.authorizationEndpoints.list()).data.map((endpoint) => endpoint.id)).toEqual([created.id])
    const updated = await client.authorizationEndpoints.update(created.id, { timeout_decision: "APPROVE" })
    expect(updated.timeout_decision).toBe("APPROVE")
    expect((await client.authorizationEndpoints.retrieve(created.id)).timeout_decision).toBe("APPROVE")
    expect((await client.authorizationEndpoints.rotateSecret(created.id)).secret).not.toBe(created.secret)
    expect((await client.authorizationEndpoints.delete(created.id)).id).toBe(created.id)
    expect((await client.authorizationEndpoints.list()).total_count).toBe(0)
  })

  it("the Effect client, derived from the server's HttpApi, creates, reads and fails with ApiFailure", async () => {
    const program = Effect.gen(function* () {
      const api = yield* makeEffectClient({ baseUrl: platform.baseUrl, apiKey: platform.org.api_key, programId: platform.org.program_id })
      const wallet = yield* api.wallets.create({ payload: { holder: { name: "Effect user", email: null } } })
      const read = yield* api.wallets.get({ path: { wallet_id: wallet.id } })
      const missing = yield* Effect.either(api.wallets.get({ path: { wallet_id: uuid() } }))
      return { wallet, read, missing }
    })
    const { missing, read, wallet } = await Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer)))
    expect(read.id).toBe(wallet.id)
    expect(read.holder.name).toBe("Effect user")
    expect(Either.isLeft(missing)).toBe(true)
    // Decoded from the envelope by the status the endpoint declares, with the answer's request id.
    expect(Either.isLeft(missing) && missing.left).toMatchObject({ _tag: "ApiFailure", status: 404, code: "not_found", param: "wallet_id" })
    expect(Either.isLeft(missing) && missing.left.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(Either.isLeft(missing) && missing.left.docUrl).toBe(`${platform.baseUrl}/docs/errors/not_found`)

    const listed = await Effect.runPromise(
      Effect.flatMap(IssuingApiClient, (api) => api.programs.list({ urlParams: {} })).pipe(
        Effect.provide(effectClientLayer({ baseUrl: platform.baseUrl, apiKey: platform.org.api_key }))
      )
    )
    expect(listed.data.map((item) => item.id)).toContain(platform.org.program_id)
  })

  it("the Effect client fails with the ApiFailure of each declared status: 400, 401, 422", async () => {
    const failureOf = <A, E>(apiKey: string, call: (api: EffectClient) => Effect.Effect<A, E>) =>
      Effect.runPromise(
        makeEffectClient({ baseUrl: platform.baseUrl, apiKey, programId: platform.org.program_id }).pipe(
          Effect.flatMap((api) => Effect.flip(call(api))),
          Effect.provide(FetchHttpClient.layer)
        )
      )
    const wallet = await client.wallets.create({ holder: { name: "Effect rules" } })
    const failures = [
      await failureOf(platform.org.api_key, (api) => api.wallets.list({ urlParams: { order_by: "nope" } })),
      await failureOf("sk_test_unknown", (api) => api.wallets.list({ urlParams: {} })),
      await failureOf(platform.org.api_key, (api) =>
        api.transfers.create({
          payload: {
            payment_rail: "book",
            amount: 100,
            currency: "USD",
            from_financial_account_id: wallet.financial_account_id,
            to_financial_account_id: wallet.financial_account_id,
            transaction_id: null,
            description: null
          }
        })
      )
    ]
    expect(failures.map((failure) => (failure instanceof ApiFailure ? [failure.status, failure.code] : failure))).toEqual([
      [400, "invalid_request"],
      [401, "authentication_error"],
      [422, "same_financial_account"]
    ])
  })

  describe("retries through a flaky proxy in front of the platform", () => {
    let proxy: FlakyProxy
    let flaky: IssuingClient
    beforeAll(async () => {
      proxy = await startFlakyProxy(platform.baseUrl)
      // Short back-off so the tests do not wait; Retry-After is still honoured. The time-out is far
      // above any real answer, however slow the machine: only the proxy's held tries reach it, and
      // the tests that hold one give that call a short time-out of its own.
      flaky = new IssuingClient({
        apiKey: platform.org.api_key,
        baseUrl: proxy.url,
        programId: platform.org.program_id,
        initialRetryDelayMs: 10,
        maxRetryDelayMs: 50,
        timeoutMs: 30_000
      })
    })
    afterEach(() => {
      proxy.seen.length = 0
      proxy.script = []
    })
    afterAll(async () => {
      await proxy?.close()
    })

    /** Funds a new wallet through the flaky client; returns what the proxy saw and the wallet's transfers. */
    const fundThroughProxy = async (amount: number, options?: { readonly timeoutMs: number; readonly maxRetries: number }) => {
      const wallet = await client.wallets.create({ holder: { name: "Retry" } })
      proxy.seen.length = 0
      const transfer = await flaky.transfers.create(
        {
          paymentRail: "fednow_instant",
          amount,
          currency: "USD",
          to_financial_account_id: wallet.financial_account_id
        },
        options
      )
      const transfers = await client.transfers.list({ financial_account_id: wallet.financial_account_id })
      const account = await client.financialAccounts.retrieve(wallet.financial_account_id)
      return { transfer, transfers, account, seen: [...proxy.seen] }
    }

    const expectPostedOnce = (result: Awaited<ReturnType<typeof fundThroughProxy>>, tries: number, amount: number) => {
      expect(result.seen).toHaveLength(tries)
      const keys = new Set(result.seen.map((request) => request.idempotencyKey))
      expect(keys.size).toBe(1)
      expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/)
      expect(result.transfers.total_count).toBe(1)
      expect(result.transfers.data[0]!.id).toBe(result.transfer.id)
      expect(result.account.balance.amount).toBe(amount)
    }

    it("429 with Retry-After, then success: the same key, posted once", async () => {
      const limited = {
        kind: "status" as const,
        status: 429,
        headers: { "retry-after": "1" },
        body: '{"error":{"type":"rate_limit_error","code":"rate_limited","message":"Slow down.","param":null,"request_id":"r","doc_url":"d"}}'
      }
      proxy.script = [limited]
      expectPostedOnce(await fundThroughProxy(101), 2, 101)
    })

    it("500 twice, then success: the same key, posted once", async () => {
      proxy.script = [
        { kind: "status", status: 500, body: "{}" },
        { kind: "status", status: 503 }
      ]
      expectPostedOnce(await fundThroughProxy(102), 3, 102)
    })

    it("a dropped connection before the platform saw it, then success", async () => {
      proxy.script = [{ kind: "drop" }]
      expectPostedOnce(await fundThroughProxy(103), 2, 103)
    })

    it("the platform posted it but the answer was lost: the retry gets the stored answer, posted once", async () => {
      proxy.script = [{ kind: "forward-then-drop" }]
      expectPostedOnce(await fundThroughProxy(104), 2, 104)
    })

    it("a try that times out is retried with the same key", async () => {
      proxy.script = [{ kind: "hang" }]
      // The held try can only time out. A short time-out applies to every try of the call, so a
      // forwarded retry slower than it on a loaded machine times out too and is retried, with the
      // same key (the platform then answers with what it stored): more tries, still posted once.
      const result = await fundThroughProxy(105, { timeoutMs: 1_000, maxRetries: 6 })
      expect(result.seen[0]!.behaviour).toBe("hang")
      expectPostedOnce(result, Math.max(2, result.seen.length), 105)
    })

    it("after the retries: RateLimitError, InternalServerError, ConnectionError, TimeoutError; nothing posted", async () => {
      const wallet = await client.wallets.create({ holder: { name: "Never funded" } })
      const fund = () =>
        flaky.transfers.create({
          paymentRail: "fednow_instant",
          amount: 1,
          currency: "USD",
          to_financial_account_id: wallet.financial_account_id
        })
      proxy.script = Array.from({ length: 3 }, () => ({ kind: "status" as const, status: 429, headers: { "retry-after": "0" } }))
      await expect(fund()).rejects.toBeInstanceOf(RateLimitError)
      proxy.script = Array.from({ length: 3 }, () => ({ kind: "status" as const, status: 502 }))
      await expect(fund()).rejects.toBeInstanceOf(InternalServerError)
      proxy.script = Array.from({ length: 3 }, () => ({ kind: "drop" as const }))
      const dropped = await fund().catch((error: unknown) => error)
      expect(dropped).toBeInstanceOf(ConnectionError)
      expect(dropped).not.toBeInstanceOf(TimeoutError)
      proxy.script = [{ kind: "hang" }]
      await expect(
        flaky.transfers.create(
          { paymentRail: "fednow_instant", amount: 1, currency: "USD", to_financial_account_id: wallet.financial_account_id },
          { maxRetries: 0, timeoutMs: 200 }
        )
      ).rejects.toBeInstanceOf(TimeoutError)
      // 4 calls: three of three tries, one of one; four keys, one per call.
      expect(proxy.seen).toHaveLength(10)
      expect(new Set(proxy.seen.map((request) => request.idempotencyKey)).size).toBe(4)
      expect((await client.transfers.list({ financial_account_id: wallet.financial_account_id })).total_count).toBe(0)
    })

    it("a Retry-After beyond maxRetryAfterMs fails at once; GETs are retried too", async () => {
      proxy.script = [{ kind: "status", status: 429, headers: { "retry-after": "3600" } }]
      await expect(flaky.programs.list()).rejects.toBeInstanceOf(RateLimitError)
      expect(proxy.seen).toHaveLength(1)
      expect(proxy.seen[0]!.idempotencyKey).toBeUndefined()
      proxy.seen.length = 0
      proxy.script = [{ kind: "drop" }, { kind: "status", status: 500 }]
      expect((await flaky.programs.list()).total_count).toBeGreaterThan(0)
      expect(proxy.seen.map((request) => request.behaviour)).toEqual(["drop", "status", "forward"])
    })
  })
})
