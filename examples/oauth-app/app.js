// A connected application (an expense tool) acting on a customer's program through OAuth 2.1
// (docs/oauth.md): the code flow with PKCE and state, driven by oauth4webapi, tokens kept on the
// server per browser session, the access token refreshed (and its refresh token rotated) when it
// has expired. It never sees an API key.
import * as crypto from "node:crypto"
import * as http from "node:http"
import * as oauth from "oauth4webapi"

/**
 * Starts the application. `options`: `{issuer, clientId, clientSecret, port?, allowHttp?}`;
 * `allowHttp` lets oauth4webapi talk to a loopback http issuer (development and tests only).
 */
export const startOAuthApp = async ({ issuer, clientId, clientSecret, port = 0, allowHttp = false }) => {
  const http_ = allowHttp ? { [oauth.allowInsecureRequests]: true } : {}
  const issuerUrl = new URL(issuer)
  const as = await oauth.processDiscoveryResponse(issuerUrl, await oauth.discoveryRequest(issuerUrl, { algorithm: "oauth2", ...http_ }))
  const client = { client_id: clientId }
  const auth = oauth.ClientSecretBasic(clientSecret)
  /** Sessions by cookie: the pending PKCE verifier and state, then the tokens. Bounded like any cache. */
  const sessions = new Map()
  let redirectUri

  const session = (request, response) => {
    const id = /(?:^|;\s*)sid=([\w-]+)/.exec(request.headers.cookie ?? "")?.[1]
    if (id !== undefined && sessions.has(id)) return sessions.get(id)
    const fresh = { id: crypto.randomUUID() }
    if (sessions.size >= 10_000) sessions.delete(sessions.keys().next().value)
    sessions.set(fresh.id, fresh)
    response.setHeader("set-cookie", `sid=${fresh.id}; HttpOnly; SameSite=Lax; Path=/`)
    return fresh
  }

  /** A live access token of the session, refreshed when expired (each refresh rotates the refresh token). */
  const accessToken = async (state) => {
    if (state.tokens === undefined) return undefined
    if (Date.now() < state.expiresAtMs - 5_000) return state.tokens.access_token
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, state.tokens.refresh_token, http_)
    )
    state.tokens = refreshed
    state.expiresAtMs = Date.now() + refreshed.expires_in * 1000
    return refreshed.access_token
  }

  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url, redirectUri)
    const state = session(request, response)
    try {
      if (url.pathname === "/connect") {
        state.verifier = oauth.generateRandomCodeVerifier()
        state.state = oauth.generateRandomState()
        const authorize = new URL(as.authorization_endpoint)
        authorize.search = new URLSearchParams({
          response_type: "code",
          client_id: clientId,
          redirect_uri: redirectUri,
          scope: "read write",
          state: state.state,
          code_challenge: await oauth.calculatePKCECodeChallenge(state.verifier),
          code_challenge_method: "S256"
        }).toString()
        return void response.writeHead(302, { location: authorize.toString() }).end()
      }
      if (url.pathname === "/callback") {
        // Checks state and iss (RFC 9207); an access_denied comes back as an error here.
        const params = oauth.validateAuthResponse(as, client, url, state.state)
        const tokens = await oauth.processAuthorizationCodeResponse(
          as,
          client,
          await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, state.verifier, http_)
        )
        state.verifier = undefined
        state.tokens = tokens
        state.expiresAtMs = Date.now() + tokens.expires_in * 1000
        state.programId = undefined
        return void response.writeHead(302, { location: "/cards" }).end()
      }
      if (url.pathname === "/cards") {
        const token = await accessToken(state)
        if (token === undefined) return void response.writeHead(302, { location: "/connect" }).end()
        // The programs the customer granted: introspection names them.
        if (state.programId === undefined) {
          const info = await oauth.processIntrospectionResponse(
            as,
            client,
            await oauth.introspectionRequest(as, client, auth, token, http_)
          )
          state.programId = info.program_ids[0]
        }
        const cards = await fetch(`${issuer}/v1/cards`, { headers: { authorization: `Bearer ${token}`, "x-program-id": state.programId } })
        response.writeHead(cards.status, { "content-type": "application/json" })
        return void response.end(await cards.text())
      }
      if (url.pathname === "/disconnect" && state.tokens !== undefined) {
        await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, state.tokens.refresh_token, http_))
        state.tokens = undefined
        return void response.writeHead(204).end()
      }
      response.writeHead(404).end()
    } catch (error) {
      const code = error instanceof oauth.AuthorizationResponseError || error instanceof oauth.ResponseBodyError ? error.error : "error"
      response.writeHead(code === "access_denied" ? 403 : 400, { "content-type": "text/plain" })
      response.end(`Could not connect: ${code}`)
    }
  })
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${server.address().port}`
  redirectUri = `${url}/callback`
  return { url, redirectUri, close: () => new Promise((resolve) => server.close(resolve)) }
}
