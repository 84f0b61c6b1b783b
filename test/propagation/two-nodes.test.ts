import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { type Cluster, NODE_ADMIN_SECRET as ADMIN_SECRET, type Node, startCluster } from "../support/nodes.js"
import { startDecisionReceiver } from "../support/decisionReceiver.js"
import { queueDrained } from "../support/queue.js"
import { startReceiver } from "../webhooks/receiver.js"

/**
 * Two `issuing serve` processes on one database (a PostgreSQL database, or one SQLite file): a
 * change made through node A holds on node B from the very next request — B's caches of keys and
 * cards were warm and are retired by the change feed.
 */
/** Both stores, and PostgreSQL once more without LISTEN/NOTIFY (ISSUING_PG_NOTIFY=off: caches and the queue polled). */
const MODES = [
  ...STORE_KINDS.map((kind) => ({ kind, name: kind, env: {} as Record<string, string> })),
  { kind: "postgres" as const, name: "postgres (ISSUING_PG_NOTIFY=off)", env: { ISSUING_PG_NOTIFY: "off" } as Record<string, string> }
]

/**
 * The sessions on a PostgreSQL database other than this one: how many, and how many listen — a
 * node's listening connection by the application_name it reports (docs/operations.md#the-change-feed),
 * or any session whose last statement was a LISTEN.
 */
const sessionsOn = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query(
      `SELECT count(*)::int AS connected,
              count(*) FILTER (WHERE application_name = 'issuing-listen' OR query ILIKE 'LISTEN %')::int AS listening
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`
    )
    return rows[0] as { readonly connected: number; readonly listening: number }
  } finally {
    await client.end()
  }
}

describe.each(MODES)("two nodes on one $name database", ({ kind, env }) => {
  let database: TestDatabase
  let cluster: Cluster | undefined
  let a: Node | undefined
  let b: Node | undefined
  let programId: string

  const call = async (node: Node | undefined, method: string, route: string, options: { key?: string; body?: unknown } = {}) => {
    const response = await fetch(`${node!.url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${options.key ?? ADMIN_SECRET}`,
        "x-program-id": programId,
        ...(options.body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text), text }
  }

  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
    cluster = await startCluster(database, env)
    ;({ a, b, programId } = cluster)
  }, 120_000)

  afterAll(async () => {
    await cluster?.stop()
    await database?.drop()
  }, 60_000)

  it("a freeze on A declines the next authorization on B; an unfreeze approves it again", async () => {
    const wallet = await call(a, "POST", "/v1/wallets", { body: { holder: { name: "Ada Lovelace" } } })
    expect(wallet.status, wallet.text).toBe(200)
    const funded = await call(a, "POST", "/v1/transfers", {
      body: { paymentRail: "fednow_instant", amount: 100_000, currency: "USD", to_financial_account_id: wallet.body.financial_account_id }
    })
    expect(funded.status, funded.text).toBe(200)
    const card = await call(a, "POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
    expect(card.status, card.text).toBe(200)
    const authorize = () => call(b, "POST", "/v1/simulate/authorizations", { body: { card_id: card.body.id, amount: 100, mcc: "5411" } })

    // B's caches are warm: the key, the program, the card as read by GET.
    expect((await call(b, "GET", `/v1/cards/${card.body.id}`)).body.state).toBe("ACTIVE")
    expect((await call(b, "GET", `/v1/cards/${card.body.id}`)).body.state).toBe("ACTIVE")
    expect((await authorize()).body.status).toBe("PENDING")

    expect((await call(a, "POST", `/v1/cards/${card.body.id}/freeze`)).status).toBe(200)
    const declined = await authorize()
    expect(declined.status, declined.text).toBe(200)
    expect(declined.body).toMatchObject({ status: "DECLINED", decline_reason: "CARD_FROZEN" })
    expect((await call(b, "GET", `/v1/cards/${card.body.id}`)).body.state).toBe("FROZEN")

    expect((await call(a, "POST", `/v1/cards/${card.body.id}/unfreeze`)).status).toBe(200)
    expect((await authorize()).body).toMatchObject({ status: "PENDING", decline_reason: null })
    expect((await call(b, "GET", `/v1/cards/${card.body.id}`)).body.state).toBe("ACTIVE")

    expect((await call(a, "POST", `/v1/cards/${card.body.id}/close`)).status).toBe(200)
    expect((await authorize()).body).toMatchObject({ status: "DECLINED", decline_reason: "CARD_CLOSED" })
    expect((await call(b, "GET", `/v1/cards/${card.body.id}`)).body.state).toBe("CLOSED")
  })

  it("spend controls changed on A (PATCH) decide the next authorization on B", async () => {
    const wallet = await call(a, "POST", "/v1/wallets", { body: { holder: { name: "Grace Hopper" } } })
    const funded = await call(a, "POST", "/v1/transfers", {
      body: { paymentRail: "fednow_instant", amount: 100_000, currency: "USD", to_financial_account_id: wallet.body.financial_account_id }
    })
    expect(funded.status, funded.text).toBe(200)
    const card = await call(a, "POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
    const authorize = () => call(b, "POST", "/v1/simulate/authorizations", { body: { card_id: card.body.id, amount: 100, mcc: "5411" } })
    // B's caches are warm.
    expect((await call(b, "GET", `/v1/cards/${card.body.id}`)).body.blocked_mcc_codes).toEqual([])
    expect((await authorize()).body.status).toBe("PENDING")

    expect((await call(a, "PATCH", `/v1/cards/${card.body.id}`, { body: { blockedMccCodes: ["5411"] } })).status).toBe(200)
    expect((await authorize()).body).toMatchObject({ status: "DECLINED", decline_reason: "MCC_BLOCKED" })
    expect((await call(b, "GET", `/v1/cards/${card.body.id}`)).body.blocked_mcc_codes).toEqual(["5411"])

    expect((await call(a, "PATCH", `/v1/cards/${card.body.id}`, { body: { blocked_mcc_codes: null } })).status).toBe(200)
    expect((await authorize()).body).toMatchObject({ status: "PENDING" })

    // Merchant countries (docs/card-transactions.md#controls) travel the same way.
    const abroad = () =>
      call(b, "POST", "/v1/simulate/authorizations", {
        body: { card_id: card.body.id, amount: 100, merchant: { acceptor_id: "A1", name: "Shop", country: "FR", mcc: "5411" } }
      })
    expect((await abroad()).body.status).toBe("PENDING")
    expect((await call(a, "PATCH", `/v1/cards/${card.body.id}`, { body: { allowed_merchant_countries: ["US"] } })).status).toBe(200)
    expect((await abroad()).body).toMatchObject({ status: "DECLINED", decline_reason: "MERCHANT_COUNTRY_NOT_ALLOWED" })

    // So do spending limits (docs/card-transactions.md#spending-limits): three approved so far, then a
    // count of four, and B's spend-limits and authorizations follow each change at once.
    const atHome = () =>
      call(b, "POST", "/v1/simulate/authorizations", {
        body: { card_id: card.body.id, amount: 100, merchant: { acceptor_id: "A1", name: "Shop", country: "US", mcc: "5411" } }
      })
    const limit = (count: number) =>
      call(a, "PATCH", `/v1/cards/${card.body.id}`, { body: { spending_limits: [{ interval: "ALL_TIME", count }] } })
    expect((await limit(4)).status).toBe(200)
    expect((await call(b, "GET", `/v1/cards/${card.body.id}/spend-limits`)).body.data).toMatchObject([
      { spent_count: 3, remaining_count: 1 }
    ])
    expect((await atHome()).body.status).toBe("PENDING")
    expect((await atHome()).body).toMatchObject({ status: "DECLINED", decline_reason: "SPENDING_LIMIT_EXCEEDED" })
    expect((await limit(5)).status).toBe(200)
    expect((await atHome()).body.status).toBe("PENDING")
  })

  it("require_verified_cardholder set on A refuses B's next card for an unverified cardholder; a verification on A lets B issue it", async () => {
    const programPatch = (required: boolean) =>
      fetch(`${a!.url}/v1/programs/${programId}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${ADMIN_SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ require_verified_cardholder: required })
      })
    const cardholder = await call(a, "POST", "/v1/cardholders", {
      body: { type: "individual", name: "Ada", billing_address: { line1: "1 Main St", city: "X", postal_code: "1", country: "US" } }
    })
    expect(cardholder.status, cardholder.text).toBe(200)
    const wallet = await call(b, "POST", "/v1/wallets", { body: { holder: { name: "Ada" }, cardholder_id: cardholder.body.id } })
    const issue = () => call(b, "POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
    // B has used the program (its program cache is warm) and issued a card before the change.
    expect((await issue()).status).toBe(200)
    expect((await programPatch(true)).status).toBe(200)
    const refused = await issue()
    expect(refused.status, refused.text).toBe(422)
    expect(refused.body.error).toMatchObject({ code: "cardholder_not_verified", param: "cardholder_id" })
    expect((await call(a, "POST", `/v1/cardholders/${cardholder.body.id}/verification`, { body: { status: "VERIFIED" } })).status).toBe(200)
    expect((await issue()).body.cardholder_id).toBe(cardholder.body.id)
    expect((await programPatch(false)).status).toBe(200)
  })

  it("an authorization endpoint created, changed, disabled or deleted on A decides B's next authorization", async () => {
    const receiver = await startDecisionReceiver()
    try {
      const wallet = await call(a, "POST", "/v1/wallets", { body: { holder: { name: "Katherine Johnson" } } })
      const funded = await call(a, "POST", "/v1/transfers", {
        body: { paymentRail: "fednow_instant", amount: 100_000, currency: "USD", to_financial_account_id: wallet.body.financial_account_id }
      })
      expect(funded.status, funded.text).toBe(200)
      const card = await call(a, "POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
      expect(card.status, card.text).toBe(200)
      const authorize = () => call(b, "POST", "/v1/simulate/authorizations", { body: { card_id: card.body.id, amount: 100, mcc: "5411" } })
      /** How many decision requests the receiver has had for this card. */
      const asked = async () => (await receiver.log()).filter((request) => request.body?.data?.card?.id === card.body.id).length

      // B has decided without an endpoint (and cached that there is none).
      expect((await authorize()).body).toMatchObject({ status: "PENDING" })
      expect((await authorize()).body).toMatchObject({ status: "PENDING" })

      const created = await call(a, "POST", "/v1/authorization-endpoints", { body: { url: receiver.url("/decline") } })
      expect(created.status, created.text).toBe(200)
      await receiver.trust([created.body.secret])
      const endpoint = created.body.id as string
      expect((await authorize()).body).toMatchObject({ status: "DECLINED", decline_reason: "WEBHOOK_DECLINED" })
      expect(await asked()).toBe(1)

      expect((await call(a, "PATCH", `/v1/authorization-endpoints/${endpoint}`, { body: { url: receiver.url("/approve") } })).status).toBe(
        200
      )
      expect((await authorize()).body).toMatchObject({ status: "PENDING" })
      expect(await asked()).toBe(2)

      const rotated = await call(a, "POST", `/v1/authorization-endpoints/${endpoint}/rotate-secret`)
      expect(rotated.status, rotated.text).toBe(200)
      await receiver.trust([rotated.body.secret])
      expect((await authorize()).body).toMatchObject({ status: "PENDING" })
      // B signed with the new secret: the receiver verified the request against it alone.
      expect((await receiver.log()).filter((request) => request.body?.data?.card?.id === card.body.id).at(-1)?.verified).toBe(true)

      const disabled = await call(a, "PATCH", `/v1/authorization-endpoints/${endpoint}`, {
        body: { url: receiver.url("/decline"), disabled: true }
      })
      expect(disabled.status, disabled.text).toBe(200)
      expect((await authorize()).body).toMatchObject({ status: "PENDING" })
      expect(await asked()).toBe(3)

      expect((await call(a, "PATCH", `/v1/authorization-endpoints/${endpoint}`, { body: { disabled: false } })).status).toBe(200)
      expect((await authorize()).body).toMatchObject({ status: "DECLINED", decline_reason: "WEBHOOK_DECLINED" })
      expect(await asked()).toBe(4)

      expect((await call(a, "DELETE", `/v1/authorization-endpoints/${endpoint}`)).status).toBe(200)
      expect((await authorize()).body).toMatchObject({ status: "PENDING" })
      expect(await asked()).toBe(4)
    } finally {
      receiver.close()
    }
  })

  it("a key revoked on A gets 401 on B on the very next request, reads and writes alike", async () => {
    const created = await call(a, "POST", "/v1/api-keys", { body: { name: "short-lived", role: "developer" } })
    expect(created.status, created.text).toBe(200)
    const key = created.body.secret as string
    // Warm on B, for reads (the feed's notified version) and writes (the committed version).
    for (let i = 0; i < 3; i++) expect((await call(b, "GET", "/v1/cards", { key })).status).toBe(200)
    expect((await call(b, "POST", "/v1/wallets", { key, body: { holder: { name: "Warm" } } })).status).toBe(200)

    expect((await call(a, "DELETE", `/v1/api-keys/${created.body.id}`)).status).toBe(200)
    const read = await call(b, "GET", "/v1/cards", { key })
    expect(read.status, read.text).toBe(401)
    expect((await call(b, "POST", "/v1/wallets", { key, body: { holder: { name: "Late" } } })).status).toBe(401)
    expect((await call(a, "GET", "/v1/cards", { key })).status).toBe(401)
  })

  it("a subscription created, disabled or deleted on A decides the fan-out of B's next event", async () => {
    const receiver = await startReceiver()
    try {
      const subscribe = async (url: string) => {
        const created = await call(a, "POST", "/v1/webhook-subscriptions", { body: { url, event_types: ["wallet.created"] } })
        expect(created.status, created.text).toBe(200)
        return created.body.id as string
      }
      const watched = await subscribe(`${receiver.url}/watched`)
      const witness = await subscribe(`${receiver.url}/witness`)
      /** A wallet made on B; resolves with the paths its wallet.created event was delivered to. */
      const walletOnB = async () => {
        const wallet = await call(b, "POST", "/v1/wallets", { body: { holder: { name: "Fan Out" } } })
        expect(wallet.status, wallet.text).toBe(200)
        const event = await call(b, "GET", "/v1/events?type=wallet.created&page_size=1")
        const eventId = event.body.data[0].id as string
        const toEvent = (received: ReadonlyArray<{ readonly id: string }>) => received.filter((request) => request.id === eventId)
        // The witness subscription stays enabled: once it has the event, the fan-out is done; once
        // the queue holds nothing for the event, every delivery of it has been sent and recorded.
        await receiver.waitFor((received) => toEvent(received).length >= 1, 20_000)
        await queueDrained(database, { eventId })
        return new Set(receiver.received.filter((request) => request.id === eventId).map((request) => request.path.split("/").at(-1)))
      }
      expect(await walletOnB()).toEqual(new Set(["watched", "witness"]))
      expect((await call(a, "PATCH", `/v1/webhook-subscriptions/${watched}`, { body: { disabled: true } })).status).toBe(200)
      expect(await walletOnB()).toEqual(new Set(["witness"]))
      expect((await call(a, "PATCH", `/v1/webhook-subscriptions/${watched}`, { body: { disabled: false } })).status).toBe(200)
      expect(await walletOnB()).toEqual(new Set(["watched", "witness"]))
      expect((await call(a, "DELETE", `/v1/webhook-subscriptions/${watched}`)).status).toBe(200)
      expect(await walletOnB()).toEqual(new Set(["witness"]))
      expect((await call(a, "DELETE", `/v1/webhook-subscriptions/${witness}`)).status).toBe(200)
    } finally {
      await receiver.close()
    }
  })

  it("transfers posted at once on both nodes, both ways between two wallets, never overdraw, and the balances are what posted", async () => {
    const wallet = async () => {
      const created = await call(a, "POST", "/v1/wallets", { body: { holder: { name: "Both Ways" } } })
      expect(created.status, created.text).toBe(200)
      return created.body.financial_account_id as string
    }
    const [x, y] = [await wallet(), await wallet()]
    for (const [account, amount] of [
      [x, 1_000],
      [y, 100]
    ] as const) {
      const funded = await call(a, "POST", "/v1/transfers", {
        body: { paymentRail: "fednow_instant", amount, currency: "USD", to_financial_account_id: account }
      })
      expect(funded.status, funded.text).toBe(200)
    }
    // 60 of 25 from x to y and 40 of 5 from y to x, alternating nodes, all at once (on
    // PostgreSQL each node writes the ones that wait in batches, locking both ways round).
    const requests = [
      ...Array.from({ length: 60 }, (_, i) => ({ node: i % 2 === 0 ? a : b, from: x, to: y, amount: 25 })),
      ...Array.from({ length: 40 }, (_, i) => ({ node: i % 2 === 0 ? b : a, from: y, to: x, amount: 5 }))
    ]
    const answers = await Promise.all(
      requests.map(({ node, from, to, amount }) =>
        call(node, "POST", "/v1/transfers", {
          body: { paymentRail: "book", amount, currency: "USD", from_financial_account_id: from, to_financial_account_id: to }
        })
      )
    )
    for (const answer of answers) {
      if (answer.status !== 200) {
        expect(answer.status, answer.text).toBe(422)
        expect(answer.body.error).toMatchObject({ code: "insufficient_funds", param: "amount" })
      }
    }
    const moved = (from: string) =>
      requests.reduce((sum, request, i) => sum + (request.from === from && answers[i]!.status === 200 ? request.amount : 0), 0)
    const balance = async (account: string) => {
      const balances = await call(b, "GET", `/v1/financial-accounts/${account}/balances`)
      expect(balances.status, balances.text).toBe(200)
      return balances.body.data.find((row: { book: string }) => row.book === "principal").balance.amount as number
    }
    const [atX, atY] = [await balance(x), await balance(y)]
    expect(atX).toBe(1_000 - moved(x) + moved(y))
    expect(atY).toBe(100 - moved(y) + moved(x))
    expect(Math.min(atX, atY)).toBeGreaterThanOrEqual(0)
    // x's 60 × 25 = 1,500 cannot all fit: at most its 1,000 plus all of y's 200.
    expect(moved(x)).toBeLessThanOrEqual(1_200)
    expect(answers.some((answer) => answer.status === 422)).toBe(true)
    const listed = await call(a, "GET", `/v1/transfers?financial_account_id=${x}&page_size=1`)
    expect(listed.body.total_count).toBe(answers.filter((answer) => answer.status === 200).length + 1)
  })

  // After the tests above made both nodes read through their caches (which starts a
  // node's change feed, and with it its listening connection when it has one).
  if (kind === "postgres") {
    const notify = env.ISSUING_PG_NOTIFY !== "off"
    it(notify ? "each node LISTENs, on one connection of its own" : "no node LISTENs: caches and the queue are polled", async () => {
      for (const node of [a, b]) expect((await call(node, "GET", "/v1/cards")).status).toBe(200)
      if (notify) {
        await expect.poll(() => sessionsOn(database.url), { timeout: 10_000 }).toMatchObject({ listening: 2 })
      } else {
        const sessions = await sessionsOn(database.url)
        // The nodes are connected (their pools), so the query looks where they are.
        expect(sessions.connected).toBeGreaterThan(0)
        expect(sessions.listening).toBe(0)
      }
    })
  }

  it("every /v1 response says Cache-Control: no-store, errors included", async () => {
    for (const node of [a, b]) {
      expect((await call(node, "GET", "/v1/cards")).headers.get("cache-control")).toBe("no-store")
      expect((await call(node, "GET", "/v1/cards", { key: "nope" })).headers.get("cache-control")).toBe("no-store")
      expect((await call(node, "GET", `/v1/cards/${"0".repeat(8)}-0000-7000-8000-${"0".repeat(12)}`)).headers.get("cache-control")).toBe(
        "no-store"
      )
    }
  })
})
