import pg from "pg"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { interactionOf, pkce, REDIRECT_URI } from "../oauth/support.js"
import { runCli } from "../support/cli.js"
import { createTestDatabase, type TestDatabase } from "../support/databases.js"
import { type Cluster, NODE_ADMIN_SECRET as ADMIN_SECRET, type Node, startCluster } from "../support/nodes.js"
import { type Pgbouncer, pgbouncerAvailable, startPgbouncer } from "../support/pgbouncer.js"
import { TEST_VAULT_KEY } from "../support/platform.js"
import { queueDrained } from "../support/queue.js"
import { startReceiver } from "../webhooks/receiver.js"

/** How many freezes and unfreezes on A each must be seen by B's next read. */
const TOGGLES = 40

const pgbouncer = pgbouncerAvailable("two-node")

/**
 * Every feature through PgBouncer 1.18 in `pool_mode = transaction` (docs/operations.md#pgbouncer):
 * two `issuing serve` processes whose pools go through the pooler, listening on a direct URL
 * (ISSUING_DATABASE_LISTEN_URL) or — the mistake the feed's probe guards against — through the
 * pooler too, where LISTEN hears nothing and the nodes must not trust their feed.
 */
describe.runIf(pgbouncer)("through PgBouncer in transaction mode", () => {
  let bouncer: Pgbouncer
  beforeAll(async () => {
    bouncer = await startPgbouncer(inject("pgAdminUrl"))
  }, 60_000)
  afterAll(async () => {
    await bouncer?.stop()
  }, 60_000)

  const call = async (
    node: Node,
    programId: string,
    method: string,
    route: string,
    options: { key?: string; body?: unknown; program?: boolean } = {}
  ) => {
    const response = await fetch(`${node.url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${options.key ?? ADMIN_SECRET}`,
        ...(options.program === false ? {} : { "x-program-id": programId }),
        ...(options.body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? null : JSON.parse(text), text }
  }

  /** Freezes and unfreezes a card on A TOGGLES times; counts B's reads right after that showed the former state. */
  const staleReadsOnB = async (cluster: Cluster) => {
    const { a, b, programId } = cluster
    const wallet = await call(a, programId, "POST", "/v1/wallets", { body: { holder: { name: "Toggle" } } })
    const card = await call(a, programId, "POST", "/v1/cards", { body: { wallet_id: wallet.body.id, type: "VIRTUAL" } })
    expect(card.status, card.text).toBe(200)
    let stale = 0
    for (let i = 0; i < TOGGLES; i++) {
      // B's cache is warm with the current state.
      await call(b, programId, "GET", `/v1/cards/${card.body.id}`)
      await call(b, programId, "GET", `/v1/cards/${card.body.id}`)
      const action = i % 2 === 0 ? "freeze" : "unfreeze"
      const changed = await call(a, programId, "POST", `/v1/cards/${card.body.id}/${action}`)
      expect(changed.status, changed.text).toBe(200)
      const seen = await call(b, programId, "GET", `/v1/cards/${card.body.id}`)
      if (seen.body.state !== (action === "freeze" ? "FROZEN" : "ACTIVE")) stale++
    }
    return stale
  }

  describe("pools through the pooler, LISTEN on a direct URL", () => {
    let database: TestDatabase
    let cluster: Cluster
    let a: Node
    let b: Node
    let programId: string
    const on = (node: Node, method: string, route: string, options?: { key?: string; body?: unknown; program?: boolean }) =>
      call(node, programId, method, route, options)

    beforeAll(async () => {
      database = await createTestDatabase("postgres")
      // From an empty database: two `issuing migrate` at once through the pooler (the lock is
      // transaction-scoped), then the cluster's own migrate and its two nodes' start-up migrations.
      const env = {
        ISSUING_DATABASE_URL: bouncer.through(database.url),
        ISSUING_VAULT_KEY: TEST_VAULT_KEY.toString("base64")
      }
      const migrations = await Promise.all([runCli(["migrate"], env), runCli(["migrate"], env)])
      for (const migrated of migrations) expect(migrated.code, migrated.stderr).toBe(0)
      cluster = await startCluster(
        { ...database, url: bouncer.through(database.url) },
        { ISSUING_DATABASE_LISTEN_URL: database.url, ISSUING_OAUTH_INTERACTION_URL: "https://host.example/consent" }
      )
      ;({ a, b, programId } = cluster)
    }, 180_000)
    afterAll(async () => {
      await cluster?.stop()
      await database?.drop()
    }, 60_000)

    it("migrated every migration once, and each node said where its feed listens", async () => {
      const direct = new pg.Client({ connectionString: database.url })
      await direct.connect()
      try {
        const { rows } = await direct.query("SELECT count(*)::int AS n, count(DISTINCT migration_id)::int AS ids FROM issuing_migrations")
        expect(rows[0].n).toBeGreaterThan(20)
        expect(rows[0].ids).toBe(rows[0].n)
      } finally {
        await direct.end()
      }
      for (const node of [a, b])
        expect(node.output).toMatch(/goes through a connection pooler; the change feed listens on ISSUING_DATABASE_LISTEN_URL/)
    })

    it("posts a transfer and a batch", async () => {
      const from = await on(a, "POST", "/v1/wallets", { body: { holder: { name: "From" } } })
      const to = await on(b, "POST", "/v1/wallets", { body: { holder: { name: "To" } } })
      const funded = await on(a, "POST", "/v1/transfers", {
        body: { paymentRail: "fednow_instant", amount: 1_000, currency: "USD", to_financial_account_id: from.body.financial_account_id }
      })
      expect(funded.status, funded.text).toBe(200)
      const book = (amount: number) => ({
        paymentRail: "book",
        amount,
        currency: "USD",
        from_financial_account_id: from.body.financial_account_id,
        to_financial_account_id: to.body.financial_account_id
      })
      const single = await on(b, "POST", "/v1/transfers", { body: book(100) })
      expect(single.status, single.text).toBe(200)
      const batch = await on(a, "POST", "/v1/transfers/batch", { body: { transfers: [book(200), book(5_000), book(300)] } })
      expect(batch.status, batch.text).toBe(200)
      expect(batch.body.data.map((item: any) => item.object ?? item.error.code)).toEqual(["transfer", "insufficient_funds", "transfer"])
      const balance = async (node: Node, accountId: string) =>
        (await on(node, "GET", `/v1/financial-accounts/${accountId}`)).body.balance.amount
      expect(await balance(b, from.body.financial_account_id)).toBe(400)
      expect(await balance(a, to.body.financial_account_id)).toBe(600)
    })

    it("delivers a webhook of an event made on B", async () => {
      const receiver = await startReceiver()
      try {
        const created = await on(a, "POST", "/v1/webhook-subscriptions", {
          body: { url: `${receiver.url}/hook`, event_types: ["wallet.created"] }
        })
        expect(created.status, created.text).toBe(200)
        const wallet = await on(b, "POST", "/v1/wallets", { body: { holder: { name: "Hooked" } } })
        expect(wallet.status, wallet.text).toBe(200)
        await receiver.waitFor((received) => received.some((request) => request.body.includes(wallet.body.id)), 20_000)
        await queueDrained(database)
      } finally {
        await receiver.close()
      }
    })

    it("issues an OAuth token on A that B accepts, and B refuses it once A revoked its grant", async () => {
      const client = (
        await on(a, "POST", "/v1/oauth-clients", {
          program: false,
          body: { name: "App", type: "confidential", scopes: ["read"], redirect_uris: [REDIRECT_URI] }
        })
      ).body
      const { challenge, verifier } = await pkce()
      const query = new URLSearchParams({
        response_type: "code",
        client_id: client.client_id,
        redirect_uri: REDIRECT_URI,
        scope: "read",
        state: "s",
        code_challenge: challenge,
        code_challenge_method: "S256"
      })
      const start = await fetch(`${a.url}/oauth/authorize?${query}`, { redirect: "manual" })
      const interaction = interactionOf(start.headers.get("location"))
      const granted = await on(a, "POST", `/v1/oauth/interactions/${interaction}/grant`, {
        program: false,
        body: { program_ids: [programId], scopes: ["read"] }
      })
      expect(granted.status, granted.text).toBe(200)
      const token = await fetch(`${b.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: new URL(granted.body.redirect_to).searchParams.get("code")!,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
          client_id: client.client_id,
          client_secret: client.client_secret
        }).toString()
      })
      const tokens = (await token.json()) as any
      expect(token.status, JSON.stringify(tokens)).toBe(200)
      expect((await on(b, "GET", "/v1/cards", { key: tokens.access_token })).status).toBe(200)
      const grants = await on(a, "GET", "/v1/oauth/grants", { program: false })
      const grant = grants.body.data.find((row: any) => row.client_id === client.client_id)
      expect((await on(a, "DELETE", `/v1/oauth/grants/${grant.id}`, { program: false })).status).toBe(200)
      expect((await on(b, "GET", "/v1/cards", { key: tokens.access_token })).status).toBe(401)
    })

    it(`shows B every freeze and unfreeze made on A on its next read (${TOGGLES} of ${TOGGLES})`, async () => {
      expect(await staleReadsOnB(cluster)).toBe(0)
    })
  })

  describe("pools and LISTEN both through the pooler", () => {
    let database: TestDatabase
    let cluster: Cluster

    beforeAll(async () => {
      database = await createTestDatabase("postgres", { migrated: true })
      cluster = await startCluster({ ...database, url: bouncer.through(database.url) })
    }, 180_000)
    afterAll(async () => {
      await cluster?.stop()
      await database?.drop()
    }, 60_000)

    it(`does not trust a feed that hears nothing: B still shows every change on its next read (${TOGGLES} of ${TOGGLES})`, async () => {
      for (const node of [cluster.a, cluster.b]) expect(node.output).toMatch(/change feed listens through one too/)
      expect(await staleReadsOnB(cluster)).toBe(0)
    })
  })
})
