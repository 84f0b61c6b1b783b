// A host application: a plain node:http server with routes of its own, which mounts the issuing
// platform under /issuing. Run it with `npm run build && npm start -w @issuing/example-host-app`.
import { parseVaultKeys } from "@issuing/core"
import { bootstrapOrganization, createIssuing } from "@issuing/http"
import * as SqliteStore from "@issuing/store-sqlite"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** Where the platform is mounted in this app. */
export const MOUNT_PATH = "/issuing"

/** The host's own limit on one card authorization, in minor units: above it, the host declines. */
export const HOST_AUTHORIZATION_LIMIT = 100_000

/**
 * Real-time authorization decisions in-process (docs/card-transactions.md#real-time-decisions):
 * asked after the platform's own checks approve, with the transaction as it would be, the card
 * and the amount; answers like an authorization endpoint would, within 2 s (else DECLINE).
 * @param {{ amount: number, card: { id: string }, transaction: { mcc?: string | null } }} request
 */
export async function decideAuthorization(request) {
  if (request.amount > HOST_AUTHORIZATION_LIMIT) return { approved: false, decline_reason: "over_host_limit" }
  return { approved: true }
}

/**
 * Starts the host app. The platform shares the process (and could share the database: its tables
 * are all named issuing_…). Resolves with the URL, the first organization when one was created,
 * and a close function.
 *
 * @param {{ port?: number, host?: string, databaseFile?: string, vaultKeys?: Array<Buffer> }} [options]
 */
export async function startHostApp(options = {}) {
  const host = options.host ?? "127.0.0.1"
  const databaseFile = options.databaseFile ?? "./.data/host-app.db"
  fs.mkdirSync(path.dirname(path.resolve(databaseFile)), { recursive: true })

  // The host's own routes; anything under MOUNT_PATH goes to the platform.
  let issuing
  const server = http.createServer((request, response) => {
    const url = request.url ?? "/"
    if (url === MOUNT_PATH || url.startsWith(`${MOUNT_PATH}/`) || url.startsWith(`${MOUNT_PATH}?`)) {
      return issuing.listener(request, response)
    }
    if (request.method === "GET" && url === "/") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      return response.end(`<!doctype html><title>Host app</title><h1>Host app</h1>
<p>The issuing API is mounted at <a href="${MOUNT_PATH}/docs">${MOUNT_PATH}/docs</a>.</p>`)
    }
    if (request.method === "GET" && url === "/health") {
      response.writeHead(200, { "content-type": "application/json" })
      return response.end(JSON.stringify({ status: "ok", service: "host-app" }))
    }
    response.writeHead(404, { "content-type": "application/json" })
    response.end(JSON.stringify({ host_error: "no such page" }))
  })
  await new Promise((resolve) => server.listen(options.port ?? 3000, host, resolve))
  const address = server.address()
  const url = `http://${host}:${address.port}`

  issuing = await createIssuing({
    store: SqliteStore.layer({ filename: databaseFile }),
    vaultKeys: options.vaultKeys ?? vaultKeysFromEnvironment(),
    basePath: MOUNT_PATH,
    authorizationDecider: decideAuthorization,
    // The public base includes the mount path, so doc_url and embed_url point into this app.
    settings: { baseUrl: `${url}${MOUNT_PATH}` }
  })
  const created = await bootstrapOrganization(issuing)

  return {
    url,
    organization: created ?? undefined,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await issuing.dispose()
    }
  }
}

/** ISSUING_VAULT_KEY when set; otherwise a throwaway key (card data then cannot outlive the process). */
function vaultKeysFromEnvironment() {
  const text = process.env.ISSUING_VAULT_KEY
  if (text === undefined || text === "") {
    console.warn("host-app: ISSUING_VAULT_KEY is not set; using a throwaway vault key")
    return [crypto.randomBytes(32)]
  }
  const keys = parseVaultKeys(text)
  if (typeof keys === "string") throw new Error(`ISSUING_VAULT_KEY ${keys}`)
  return keys
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const app = await startHostApp({ port: Number(process.env.PORT ?? 3000) })
  console.log(`host-app: listening on ${app.url}; issuing mounted at ${app.url}${MOUNT_PATH}`)
  if (app.organization !== undefined) {
    console.log(`host-app: admin API key (shown once): ${app.organization.api_key}`)
    console.log(`host-app: X-Program-ID: ${app.organization.program_id}`)
  }
  process.on("SIGTERM", () => app.close().then(() => process.exit(0)))
  process.on("SIGINT", () => app.close().then(() => process.exit(0)))
}
