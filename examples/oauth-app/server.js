// `node examples/oauth-app/server.js`: the host app's consent route and a connected application
// against a running platform. Set ISSUING_URL (default http://127.0.0.1:8080), ISSUING_ADMIN_KEY and
// ISSUING_PROGRAM_ID; start the platform with ISSUING_OAUTH_INTERACTION_URL=http://127.0.0.1:4001/consent.
// The application registers itself as a client at start (a real one gets its client_id and secret
// once, from the organization's admin). Then open http://127.0.0.1:4000/connect.
import { startConsentServer } from "./consent.js"
import { startOAuthApp } from "./app.js"

const issuingUrl = process.env.ISSUING_URL ?? "http://127.0.0.1:8080"
const adminKey = process.env.ISSUING_ADMIN_KEY
const programId = process.env.ISSUING_PROGRAM_ID
if (!adminKey || !programId) {
  console.error("Set ISSUING_ADMIN_KEY and ISSUING_PROGRAM_ID.")
  process.exit(2)
}
const consent = await startConsentServer({ port: 4001, settings: { issuingUrl, adminKey, programIds: [programId] } })
const registered = await fetch(`${issuingUrl}/v1/oauth-clients`, {
  method: "POST",
  headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
  body: JSON.stringify({
    name: "Example expense tool",
    type: "confidential",
    scopes: ["read", "write"],
    redirect_uris: ["http://127.0.0.1:4000/callback"]
  })
})
const client = await registered.json()
const app = await startOAuthApp({
  issuer: issuingUrl,
  clientId: client.client_id,
  clientSecret: client.client_secret,
  port: 4000,
  allowHttp: new URL(issuingUrl).protocol === "http:"
})
console.log(`consent route on ${consent.url}/consent; connected application on ${app.url}/connect`)
