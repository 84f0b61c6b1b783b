import { IssuingClient, NotFoundError, type WebhookEvent } from "@issuing/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { authorize, authorizeQuery, INTERACTION_URL, interactionOf, REDIRECT_URI } from "../oauth/support.js"
import { STORE_KINDS } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

// docs/client.md: the client's OAuth methods (clients, the consent's interactions, grants), typed
// batch items and typed events, against a real platform on each store.
describe.each(STORE_KINDS)("@issuing/client OAuth, batch and event methods on %s", (kind) => {
  let platform: TestPlatform
  let client: IssuingClient

  beforeAll(async () => {
    platform = await startPlatform(kind, { oauthInteractionUrl: INTERACTION_URL })
    client = new IssuingClient({ apiKey: platform.org.api_key, baseUrl: platform.baseUrl, programId: platform.org.program_id })
  })
  afterAll(async () => {
    await platform?.close()
  })

  it("registers a client, grants a consent through its interaction, lists and revokes the grant, deletes the client", async () => {
    const created = await client.oauthClients.create({
      name: "Expense tool",
      type: "confidential",
      redirect_uris: [REDIRECT_URI],
      scopes: ["read", "write"]
    })
    expect(created.client_secret).toMatch(/^[A-Za-z0-9_]+_[A-Za-z0-9_-]{20,}$/)
    expect((await client.oauthClients.retrieve(created.id)).client_id).toBe(created.client_id)
    expect((await client.oauthClients.list()).data.map((listed) => listed.id)).toContain(created.id)
    const rotated = await client.oauthClients.rotateSecret(created.id)
    expect(rotated.client_secret).not.toBe(created.client_secret)

    const start = await authorize(platform, authorizeQuery(created, { scope: "read" }))
    const interaction = interactionOf(start.location)
    const pending = await client.oauth.interactions.retrieve(interaction)
    expect(pending).toMatchObject({ object: "oauth_interaction", status: "pending", scopes: ["read"] })
    expect(pending.client.client_id).toBe(created.client_id)
    const redirect = await client.oauth.interactions.grant(interaction, { program_ids: [platform.org.program_id], scopes: ["read"] })
    expect(new URL(redirect.redirect_to).searchParams.get("code")).toBeTruthy()

    const denied = interactionOf((await authorize(platform, authorizeQuery(created))).location)
    expect(new URL((await client.oauth.interactions.deny(denied)).redirect_to).searchParams.get("error")).toBe("access_denied")

    const grants = await client.oauth.grants.list()
    const grant = grants.data.find((listed) => listed.client_id === created.client_id)!
    expect(grant.object).toBe("oauth_grant")
    const revoked = await client.oauth.grants.revoke(grant.id)
    expect(revoked.id).toBe(grant.id)

    await client.oauthClients.delete(created.id)
    await expect(client.oauthClients.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError)
  })

  it("posts a batch of typed items and reads its events as the typed union", async () => {
    const wallet = await client.wallets.create({ holder: { name: "Ada Lovelace" } })
    const other = await client.wallets.create({ holder: { name: "Grace Hopper" } })
    const batch = await client.transfers.batch({
      atomic: true,
      transfers: [
        { paymentRail: "fednow_instant", amount: 500, currency: "USD", to_financial_account_id: wallet.financial_account_id },
        {
          paymentRail: "book",
          amount: 200,
          currency: "USD",
          from_financial_account_id: wallet.financial_account_id,
          to_financial_account_id: other.financial_account_id
        }
      ]
    })
    expect(batch.data).toHaveLength(2)
    const events: Array<WebhookEvent> = (await client.events.list({ type: "wallet.created", page_size: 100 })).data
    const holders = events.flatMap((event) => (event.type === "wallet.created" ? [event.data.object.holder.name] : []))
    expect(holders).toEqual(expect.arrayContaining(["Ada Lovelace", "Grace Hopper"]))
  })
})
