// The host app's consent route (docs/oauth.md#the-consent-screen): the page that
// ISSUING_OAUTH_INTERACTION_URL names. A real dashboard logs the user in first; this one shows who
// asks for what, and on the user's decision calls the platform with the organization's admin key
// (from the server, never the browser) and sends the browser on to `redirect_to`.
import * as http from "node:http"

const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * Starts the consent server. `settings` is read per request: `{issuingUrl, adminKey, programIds}`
 * (so the platform can be started after it, knowing its URL).
 */
export const startConsentServer = async ({ port = 0, settings }) => {
  const admin = (method, path, body) =>
    fetch(`${settings.issuingUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${settings.adminKey}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined
    })
  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url, "http://localhost")
    try {
      if (request.method === "GET" && url.pathname === "/consent") {
        const id = url.searchParams.get("interaction") ?? ""
        const found = await admin("GET", `/v1/oauth/interactions/${encodeURIComponent(id)}`)
        if (found.status !== 200) return void response.writeHead(404).end("No such authorization request.")
        const interaction = await found.json()
        response.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
        return void response.end(`<!doctype html><title>Connect ${escapeHtml(interaction.client.name)}</title>
<h1>${escapeHtml(interaction.client.name)} asks for: ${interaction.scopes.map(escapeHtml).join(", ")}</h1>
<form method="post" action="/consent"><input type="hidden" name="interaction" value="${escapeHtml(interaction.id)}">
<button name="decision" value="allow">Allow</button> <button name="decision" value="deny">Deny</button></form>`)
      }
      if (request.method === "POST" && url.pathname === "/consent") {
        let text = ""
        for await (const chunk of request) text += chunk
        const form = new URLSearchParams(text)
        const id = encodeURIComponent(form.get("interaction") ?? "")
        // A real consent screen lets the user pick programs and narrow scopes here.
        const decided =
          form.get("decision") === "allow"
            ? await admin("POST", `/v1/oauth/interactions/${id}/grant`, { program_ids: settings.programIds, scopes: ["read", "write"] })
            : await admin("POST", `/v1/oauth/interactions/${id}/deny`)
        if (decided.status !== 200) return void response.writeHead(409).end("This authorization request is no longer pending.")
        const { redirect_to: redirectTo } = await decided.json()
        return void response.writeHead(302, { location: redirectTo }).end()
      }
      response.writeHead(404).end()
    } catch {
      response.writeHead(502).end("The platform could not be reached.")
    }
  })
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve))
  }
}
