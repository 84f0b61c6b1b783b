import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { hashSecret } from "../access/Secrets.js"
import { newId } from "../platform/Ids.js"
import { OAuthStore } from "../oauth/OAuthStore.js"
import type { StoredGrant, StoredOAuthClient, StoredToken } from "../oauth/Records.js"
import { Transactor } from "../sql/Transactor.js"
import type { PortContract } from "./Contract.js"
import { AccessStore } from "../access/AccessStore.js"
import { freshOrganization, sampleApiKey } from "./Fixtures.js"

const FIRST_PAGE = { orderBy: "created_at" as const, descending: true, limit: 10, offset: 0 }

const stamp = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString()

const sampleClient = (organizationId: string, overrides: Partial<StoredOAuthClient> = {}): StoredOAuthClient => ({
  id: newId(),
  object: "oauth_client",
  organization_id: organizationId,
  name: "App",
  client_id: `client_${newId()}`,
  redirect_uris: ["https://app.example/callback"],
  type: "confidential",
  scopes: ["read", "write"],
  created_at: stamp(),
  ...overrides
})

/** An organization with a program, a stored client and a grant of it on the program, consented by an admin key. */
const clientWithGrant = Effect.gen(function* () {
  const store = yield* OAuthStore
  const { organization, program } = yield* freshOrganization
  const key = sampleApiKey(organization.id)
  yield* (yield* AccessStore).insertApiKey(key, hashSecret(`sk_${newId()}`))
  const client = sampleClient(organization.id)
  yield* store.insertClient(client, hashSecret("cs_secret"))
  const grant: StoredGrant = {
    id: newId(),
    object: "oauth_grant",
    organization_id: organization.id,
    oauth_client_id: client.id,
    client_id: client.client_id,
    program_ids: [program.id],
    scopes: ["read", "write"],
    api_key_id: key.id,
    created_at: stamp(),
    revoked_at: null
  }
  yield* store.insertGrant(grant)
  return { organization, program, client, grant, key }
})

const token = (grantId: string, kind: StoredToken["kind"], secret: string, expiresInMs = 60_000): StoredToken => ({
  token_hash: hashSecret(secret),
  grant_id: grantId,
  kind,
  scopes: ["read"],
  created_at: stamp(),
  expires_at: stamp(expiresInMs),
  rotated_at: null,
  revoked_at: null
})

/** Contract of the OAuth port: clients by hash, single-use steps as compare-and-set, revocation reaching every token. */
export const oauthContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("stores clients with their secret hash, finds live ones only, lists and deletes them", () =>
      Effect.gen(function* () {
        const oauth = yield* OAuthStore
        const { organization } = yield* freshOrganization
        const other = yield* freshOrganization
        const client = sampleClient(organization.id)
        yield* oauth.insertClient(client, hashSecret("cs_one"))
        const publicClient = sampleClient(organization.id, { type: "public", name: "SPA" })
        yield* oauth.insertClient(publicClient, null)
        expect(Option.getOrThrow(yield* oauth.findClient(organization.id, client.id))).toEqual(client)
        expect(Option.isNone(yield* oauth.findClient(other.organization.id, client.id))).toBe(true)
        const byClientId = Option.getOrThrow(yield* oauth.findClientByClientId(client.client_id))
        expect(byClientId).toEqual({ client, secretHash: hashSecret("cs_one") })
        expect(Option.getOrThrow(yield* oauth.findClientByClientId(publicClient.client_id)).secretHash).toBeNull()
        const listed = yield* oauth.listClients(organization.id, { orderBy: "created_at", descending: false, limit: 10, offset: 0 })
        expect(listed.total).toBe(2)
        expect(Option.isNone(yield* oauth.setClientSecret(organization.id, publicClient.id, hashSecret("x")))).toBe(true)
        yield* oauth.setClientSecret(organization.id, client.id, hashSecret("cs_two"))
        expect(Option.getOrThrow(yield* oauth.findClientByClientId(client.client_id)).secretHash).toBe(hashSecret("cs_two"))
        expect(Option.isSome(yield* oauth.deleteClient(organization.id, client.id, stamp()))).toBe(true)
        expect(Option.isNone(yield* oauth.deleteClient(organization.id, client.id, stamp()))).toBe(true)
        expect(Option.isNone(yield* oauth.findClientByClientId(client.client_id))).toBe(true)
        expect(Option.isNone(yield* oauth.findClient(organization.id, client.id))).toBe(true)
        expect((yield* oauth.listClients(organization.id, { orderBy: "created_at", descending: false, limit: 10, offset: 0 })).total).toBe(
          1
        )
      })
    )

    it.effect("decides a pending interaction once, and never an expired one", () =>
      Effect.gen(function* () {
        const oauth = yield* OAuthStore
        const { client, organization } = yield* clientWithGrant
        const interaction = (expiresInMs: number) => ({
          id: newId(),
          organization_id: organization.id,
          oauth_client_id: client.id,
          redirect_uri: client.redirect_uris[0]!,
          scopes: client.scopes,
          state: "xyz",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          status: "pending" as const,
          created_at: stamp(),
          expires_at: stamp(expiresInMs)
        })
        const live = interaction(600_000)
        yield* oauth.insertInteraction(live)
        expect(Option.getOrThrow(yield* oauth.findInteraction(organization.id, live.id))).toEqual(live)
        const decisions = yield* Effect.all(
          [oauth.decideInteraction(live.id, "granted", stamp()), oauth.decideInteraction(live.id, "denied", stamp())],
          { concurrency: "unbounded" }
        )
        expect(decisions.filter(Boolean)).toHaveLength(1)
        const expired = interaction(-1000)
        yield* oauth.insertInteraction(expired)
        expect(yield* oauth.decideInteraction(expired.id, "granted", stamp())).toBe(false)
      })
    )

    it.effect("consumes a code once", () =>
      Effect.gen(function* () {
        const oauth = yield* OAuthStore
        const { client, grant } = yield* clientWithGrant
        const codeHash = hashSecret(`ac_${newId()}`)
        yield* oauth.insertCode({
          code_hash: codeHash,
          grant_id: grant.id,
          oauth_client_id: client.id,
          redirect_uri: client.redirect_uris[0]!,
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          expires_at: stamp(60_000),
          used_at: null
        })
        const results = yield* Effect.all([oauth.consumeCode(codeHash, stamp()), oauth.consumeCode(codeHash, stamp())], {
          concurrency: "unbounded"
        })
        expect(results.filter(Boolean)).toHaveLength(1)
        expect(Option.getOrThrow(yield* oauth.findCode(codeHash)).used_at).not.toBeNull()
      })
    )

    it.effect("rotates a refresh token once, even when two transactions race for it", () =>
      Effect.gen(function* () {
        const oauth = yield* OAuthStore
        const transactor = yield* Transactor
        const { grant } = yield* clientWithGrant
        const refresh = token(grant.id, "refresh", `rt_${newId()}`)
        yield* oauth.insertTokens([refresh])
        const race = () => transactor.withTransaction(oauth.rotateRefreshToken(refresh.token_hash, stamp()))
        const results = yield* Effect.all([race(), race(), race()], { concurrency: "unbounded" })
        expect(results.filter(Boolean)).toHaveLength(1)
        const expired = token(grant.id, "refresh", `rt_${newId()}`, -1000)
        yield* oauth.insertTokens([expired])
        expect(yield* oauth.rotateRefreshToken(expired.token_hash, stamp())).toBe(false)
        // An access token is never rotated as a refresh token.
        const access = token(grant.id, "access", `at_${newId()}`)
        yield* oauth.insertTokens([access])
        expect(yield* oauth.rotateRefreshToken(access.token_hash, stamp())).toBe(false)
      })
    )

    it.effect("finds an active access token with its grant, and never once the token, grant or client is gone", () =>
      Effect.gen(function* () {
        const oauth = yield* OAuthStore
        const { client, grant, organization, program } = yield* clientWithGrant
        const first = token(grant.id, "access", `at_${newId()}`)
        const second = token(grant.id, "access", `at_${newId()}`)
        const refresh = token(grant.id, "refresh", `rt_${newId()}`)
        yield* oauth.insertTokens([first, second, refresh])
        const active = Option.getOrThrow(yield* oauth.findActiveAccessToken(first.token_hash))
        expect(active).toEqual({
          grant_id: grant.id,
          organization_id: organization.id,
          oauth_client_id: client.id,
          program_ids: [program.id],
          scopes: ["read"],
          expires_at: first.expires_at
        })
        expect(Option.isNone(yield* oauth.findActiveAccessToken(refresh.token_hash))).toBe(true)
        expect(yield* oauth.revokeToken(first.token_hash, stamp())).toBe(true)
        expect(yield* oauth.revokeToken(first.token_hash, stamp())).toBe(false)
        expect(Option.isNone(yield* oauth.findActiveAccessToken(first.token_hash))).toBe(true)
        expect(Option.isSome(yield* oauth.findActiveAccessToken(second.token_hash))).toBe(true)
        yield* oauth.deleteClient(organization.id, client.id, stamp())
        expect(Option.isNone(yield* oauth.findActiveAccessToken(second.token_hash))).toBe(true)
      })
    )

    it.effect("revokes a grant, or every grant of a client, with every token of them, once", () =>
      Effect.gen(function* () {
        const oauth = yield* OAuthStore
        const { client, grant } = yield* clientWithGrant
        const second: StoredGrant = { ...grant, id: newId() }
        yield* oauth.insertGrant(second)
        const tokens = [token(grant.id, "access", `at_${newId()}`), token(grant.id, "refresh", `rt_${newId()}`)]
        const other = token(second.id, "access", `at_${newId()}`)
        yield* oauth.insertTokens([...tokens, other])
        const revoked = yield* oauth.revokeGrants({ grantId: grant.id }, stamp())
        expect(revoked.map((row) => row.id)).toEqual([grant.id])
        expect(revoked[0]!.revoked_at).not.toBeNull()
        for (const row of tokens) expect(Option.getOrThrow(yield* oauth.findToken(row.token_hash)).revoked_at).not.toBeNull()
        expect(Option.isSome(yield* oauth.findActiveAccessToken(other.token_hash))).toBe(true)
        expect(yield* oauth.revokeGrants({ grantId: grant.id }, stamp())).toEqual([])
        const byClient = yield* oauth.revokeGrants({ oauthClientId: client.id }, stamp())
        expect(byClient.map((row) => row.id)).toEqual([second.id])
        expect(Option.isNone(yield* oauth.findActiveAccessToken(other.token_hash))).toBe(true)
        expect(Option.getOrThrow(yield* oauth.findGrant(second.id)).revoked_at).not.toBeNull()
      })
    )

    it.effect("revokes every grant a key consented to; a revoked key's grants are revoked even if left unmarked", () =>
      Effect.gen(function* () {
        const oauth = yield* OAuthStore
        const access = yield* AccessStore
        const { grant, key, organization } = yield* clientWithGrant
        const access1 = token(grant.id, "access", `at_${newId()}`)
        yield* oauth.insertTokens([access1])
        expect((yield* oauth.listGrants(organization.id, FIRST_PAGE)).rows.map((row) => row.id)).toEqual([grant.id])
        // The key revoked alone (a grant inserted as it was revoked): its grant no longer works.
        yield* access.revokeApiKey(organization.id, key.id, stamp())
        expect(Option.isNone(yield* oauth.findActiveAccessToken(access1.token_hash))).toBe(true)
        expect(Option.getOrThrow(yield* oauth.findGrant(grant.id)).revoked_at).not.toBeNull()
        const revoked = yield* oauth.revokeGrants({ apiKeyId: key.id }, stamp())
        expect(revoked.map((row) => row.id)).toEqual([grant.id])
        expect(Option.getOrThrow(yield* oauth.findToken(access1.token_hash)).revoked_at).not.toBeNull()
        expect((yield* oauth.listGrants(organization.id, FIRST_PAGE)).total).toBe(0)
      })
    )
  })
