import type { IssuingSettings } from "@issuing/core"
import * as oauth from "oauth4webapi"
import { expect } from "vitest"
import type { StoreKind } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"

/** The host app's consent page the platform sends browsers to (never fetched: tests read the redirect). */
export const INTERACTION_URL = "https://host.example/consent"
export const REDIRECT_URI = "https://app.example/callback"

/** A platform with OAuth enabled. */
export const startOAuthPlatform = (kind: StoreKind, settings: Partial<IssuingSettings> = {}) =>
  startPlatform(kind, { oauthInteractionUrl: INTERACTION_URL, ...settings })

export interface CreatedClient {
  readonly id: string
  readonly client_id: string
  readonly client_secret?: string
  readonly redirect_uris: Array<string>
  readonly scopes: Array<string>
  readonly type: "confidential" | "public"
}

/** Registers a client through /v1/oauth-clients with the organization's admin key. */
export const createClient = async (
  platform: TestPlatform,
  fields: Partial<{ type: "confidential" | "public"; scopes: Array<string>; redirect_uris: Array<string>; name: string }> = {},
  adminKey = platform.org.api_key
): Promise<CreatedClient> => {
  const response = await platform.request("POST", "/v1/oauth-clients", {
    key: adminKey,
    program: null,
    body: { name: "Expense tool", type: "confidential", scopes: ["read", "write"], redirect_uris: [REDIRECT_URI], ...fields }
  })
  expect(response.status, response.text).toBe(200)
  return response.body as CreatedClient
}

/** oauth4webapi's view of the authorization server, discovered over loopback http (allowed for tests only). */
export const discover = async (platform: TestPlatform): Promise<oauth.AuthorizationServer> => {
  const issuer = new URL(platform.baseUrl)
  const response = await oauth.discoveryRequest(issuer, { algorithm: "oauth2", [oauth.allowInsecureRequests]: true })
  return oauth.processDiscoveryResponse(issuer, response)
}

/** The options every oauth4webapi request of a test takes (loopback http). */
export const insecure = { [oauth.allowInsecureRequests]: true } as const

/** The query of /oauth/authorize; each field may be overridden, or removed with null. */
export const authorizeQuery = (client: { client_id: string }, overrides: Record<string, string | null> = {}): string => {
  const params: Record<string, string | null> = {
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    scope: "read write",
    state: "st-123",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    ...overrides
  }
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== null) search.append(name, value)
  return search.toString()
}

/** GET /oauth/authorize without following the redirect. */
export const authorize = async (platform: TestPlatform, query: string) => {
  const response = await fetch(`${platform.baseUrl}/oauth/authorize?${query}`, { redirect: "manual" })
  return { status: response.status, location: response.headers.get("location"), text: await response.text(), headers: response.headers }
}

/** The interaction id of a redirect to the consent page. */
export const interactionOf = (location: string | null): string => {
  expect(location).not.toBeNull()
  const url = new URL(location!)
  expect(`${url.origin}${url.pathname}`).toBe(INTERACTION_URL)
  return url.searchParams.get("interaction")!
}

/**
 * The whole browser leg: authorize with `challenge`, then the host app grants `programIds` and
 * `scopes` with the admin key. Returns the redirect back to the client (with code, state, iss).
 */
export const consent = async (
  platform: TestPlatform,
  client: { client_id: string },
  options: { challenge: string; scopes?: Array<string>; programIds?: Array<string>; state?: string; adminKey?: string }
): Promise<URL> => {
  const start = await authorize(
    platform,
    authorizeQuery(client, {
      code_challenge: options.challenge,
      scope: (options.scopes ?? ["read", "write"]).join(" "),
      state: options.state ?? "st-123"
    })
  )
  expect(start.status, start.text).toBe(302)
  const interaction = interactionOf(start.location)
  const granted = await platform.request("POST", `/v1/oauth/interactions/${interaction}/grant`, {
    key: options.adminKey ?? platform.org.api_key,
    program: null,
    body: { program_ids: options.programIds ?? [platform.org.program_id], scopes: options.scopes ?? ["read", "write"] }
  })
  expect(granted.status, granted.text).toBe(200)
  expect(granted.body.object).toBe("oauth_redirect")
  return new URL(granted.body.redirect_to)
}

/** A POST of a form to an OAuth endpoint. */
export const postForm = async (
  platform: TestPlatform,
  path: string,
  form: Record<string, string>,
  headers: Record<string, string> = {}
) => {
  const response = await fetch(`${platform.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString()
  })
  const text = await response.text()
  let body: any
  try {
    body = text === "" ? undefined : JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, body, text }
}

/** A fresh PKCE pair. */
export const pkce = async () => {
  const verifier = oauth.generateRandomCodeVerifier()
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) }
}

/** Exchanges a code the plain way (not through oauth4webapi), for tests that send what a library would refuse to. */
export const exchange = (platform: TestPlatform, client: CreatedClient, fields: Record<string, string>) =>
  postForm(platform, "/oauth/token", {
    grant_type: "authorization_code",
    redirect_uri: REDIRECT_URI,
    client_id: client.client_id,
    ...(client.client_secret === undefined ? {} : { client_secret: client.client_secret }),
    ...fields
  })

/** Asserts an RFC 6749 §5.2 error body. */
export const expectOAuthError = (
  response: { status: number; body: any; text: string; headers: Headers },
  status: number,
  error: string
) => {
  expect(response.status, response.text).toBe(status)
  expect(response.body?.error, response.text).toBe(error)
  expect(typeof response.body.error_description).toBe("string")
  expect(response.headers.get("cache-control")).toBe("no-store")
}
