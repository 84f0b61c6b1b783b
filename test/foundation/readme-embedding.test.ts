import { configFromEnv, createIssuing, type IssuingInstance, storeFor } from "@issuing/http"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanEnv, codeBlocks, freePort, ROOT, type Started, start } from "../packaging/support.js"
import { createTestDatabase, type TestDatabase } from "../support/databases.js"
import { TEST_VAULT_KEY } from "../support/platform.js"

// The README's embedding files run as the README says (`npx tsx server.ts`, with nothing but
// ISSUING_* variables), under /issuing on a port that is not 8080: the console and its assets
// load, embed_url and doc_url name the host's own origin and mount path, and private webhook
// targets follow the address the server really listens on. The workspace's packages are taken
// from their sources (the "source" export condition), so no build is needed; test/packaging runs
// the same files from the packed packages.

const TSX = path.join(ROOT, "node_modules/tsx/dist/cli.mjs")

/** A new ESM project holding the README's server.ts and SQLite store.ts, its node_modules the workspace's. */
const readmeProject = (): string => {
  const files = new Map<string, string>()
  for (const block of codeBlocks(path.join(ROOT, "README.md"), "Embedding in your application")) {
    const title = block.lang === "ts" ? /^\/\/ (.+)\n/.exec(block.code)?.[1] : undefined
    if (title !== undefined) files.set(title, block.code)
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-readme-embedding-"))
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }))
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir")
  fs.writeFileSync(path.join(dir, "server.ts"), files.get("server.ts")!)
  fs.writeFileSync(path.join(dir, "store.ts"), files.get("store.ts, on SQLite")!)
  return dir
}

interface HostApp {
  readonly dir: string
  readonly process: Started
  /** The output up to the "mounted at" line. */
  readonly output: string
  readonly apiKey: string
  readonly programId: string
}

const startReadmeServer = async (env: Record<string, string>): Promise<HostApp> => {
  const dir = readmeProject()
  const started = start(process.execPath, [TSX, "--conditions=source", "server.ts"], { cwd: dir, env: cleanEnv(env) })
  const output = await started.waitFor(/mounted at \S+ \(console/, 90_000)
  const [, apiKey, programId] = /admin API key (\S+), X-Program-ID (\S+)/.exec(output)!
  return { dir, process: started, output, apiKey: apiKey!, programId: programId! }
}

const call = async (url: string, app: HostApp, method = "GET", body?: unknown) => {
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${app.apiKey}`,
      "x-program-id": app.programId,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() }
}

describe("the README's embedding snippet, run as written", () => {
  let loopbackPort: number
  let everyInterfacePort: number
  let loopback: HostApp
  let everyInterface: HostApp
  beforeAll(async () => {
    loopbackPort = await freePort()
    everyInterfacePort = await freePort()
    expect([loopbackPort, everyInterfacePort]).not.toContain(8080)
    ;[loopback, everyInterface] = await Promise.all([
      startReadmeServer({ ISSUING_PORT: String(loopbackPort) }),
      startReadmeServer({
        ISSUING_HOST: "0.0.0.0",
        ISSUING_PORT: String(everyInterfacePort),
        ISSUING_BASE_URL: `http://127.0.0.1:${everyInterfacePort}/issuing`
      })
    ])
  }, 180_000)
  afterAll(async () => {
    for (const app of [loopback, everyInterface]) {
      if (app === undefined) continue
      app.process.kill()
      await app.process.closed
      fs.rmSync(app.dir, { recursive: true, force: true })
    }
  })

  it("derives the base URL from the listen address and the mount path, and warns of nothing", () => {
    const base = `http://127.0.0.1:${loopbackPort}/issuing`
    expect(loopback.output).toContain(`mounted at ${base} (console: ${base}/console)`)
    expect(loopback.output).not.toContain("warning")
    expect(everyInterface.output).not.toContain("warning")
  })

  it("serves the console and its assets under the mount path", async () => {
    const origin = `http://127.0.0.1:${loopbackPort}`
    const page = await fetch(`${origin}/issuing/console`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const assets = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1]!)
    expect(assets.sort()).toEqual(["/issuing/console/console.css", "/issuing/console/console.js"])
    for (const asset of assets) expect((await fetch(`${origin}${asset}`)).status, asset).toBe(200)
    expect(html).toContain('data-base-path="/issuing"')
  })

  it("points doc_url and embed_url at the host's origin and mount path, where they are served", async () => {
    const base = `http://127.0.0.1:${loopbackPort}/issuing`
    const refused = await fetch(`${base}/v1/programs`)
    expect(refused.status).toBe(401)
    const { error } = await refused.json()
    expect(error.doc_url).toBe(`${base}/docs/errors/authentication_error`)
    expect((await fetch(error.doc_url)).status).toBe(200)

    const wallet = await call(`${base}/v1/wallets`, loopback, "POST", { holder: { name: "Ada Lovelace" } })
    expect(wallet.status).toBe(200)
    const card = await call(`${base}/v1/cards`, loopback, "POST", { wallet_id: wallet.body.id, type: "VIRTUAL" })
    expect(card.status).toBe(200)
    const session = await call(`${base}/v1/cards/${card.body.id}/embed-sessions`, loopback, "POST", {})
    expect(session.status).toBe(200)
    expect(session.body.embed_url).toBe(`${base}/v1/cards/embed?session_token=${session.body.session_token}`)
    const document = await fetch(session.body.embed_url)
    expect(document.status).toBe(200)
    expect(document.headers.get("content-type")).toContain("text/html")
  })

  it("allows private webhook targets listening on loopback, and refuses them listening on every interface", async () => {
    const subscription = { url: "http://127.0.0.1:9/hooks", event_types: ["wallet.created"] }
    const onLoopback = await call(`http://127.0.0.1:${loopbackPort}/issuing/v1/webhook-subscriptions`, loopback, "POST", subscription)
    expect(onLoopback.status).toBe(200)
    const base = `http://127.0.0.1:${everyInterfacePort}/issuing`
    const onEveryInterface = await call(`${base}/v1/webhook-subscriptions`, everyInterface, "POST", subscription)
    expect(onEveryInterface.status).toBe(400)
    expect(onEveryInterface.body.error).toMatchObject({ param: "url", doc_url: `${base}/docs/errors/invalid_request` })
  })
})

// What the README's snippet relies on, in-process: configFromEnv's derived settings, and the
// warnings createIssuing gives when the base URL or the listen address cannot be right.
describe("configFromEnv and the embedding warnings", () => {
  let database: TestDatabase
  const running: Array<{ issuing: IssuingInstance; server?: http.Server }> = []
  beforeAll(async () => {
    database = await createTestDatabase("sqlite")
  })
  afterAll(async () => {
    for (const { issuing, server } of running) {
      server?.closeAllConnections()
      server?.close()
      await issuing.dispose()
    }
    await database?.drop()
  })
  const platform = async (options: { basePath?: string; baseUrl: string; allowPrivate?: boolean }) => {
    const lines: Array<string> = []
    const issuing = await createIssuing({
      store: storeFor({ kind: "sqlite", filename: database.filename! }),
      vaultKeys: [TEST_VAULT_KEY],
      background: false,
      log: (line) => lines.push(line),
      basePath: options.basePath,
      settings: { baseUrl: options.baseUrl, webhookAllowPrivateUrls: options.allowPrivate ?? false }
    })
    running.push({ issuing })
    return { issuing, lines }
  }

  it("derives the base URL from ISSUING_HOST, ISSUING_PORT and the mount path, and private targets from ISSUING_HOST", () => {
    const env = { ISSUING_DATABASE_URL: "sqlite::memory:", ISSUING_VAULT_KEY: TEST_VAULT_KEY.toString("base64") }
    const mounted = configFromEnv({ ...env, ISSUING_PORT: "3000" }, { basePath: "issuing/" })
    expect(mounted.basePath).toBe("/issuing")
    expect(mounted.listen).toEqual({ host: "127.0.0.1", port: 3000 })
    expect(mounted.settings.baseUrl).toBe("http://127.0.0.1:3000/issuing")
    expect(mounted.settings.webhookAllowPrivateUrls).toBe(true)
    const everywhere = configFromEnv({ ...env, ISSUING_HOST: "0.0.0.0" }, { basePath: "/issuing" })
    expect(everywhere.listen).toEqual({ host: "0.0.0.0", port: 8080 })
    expect(everywhere.settings.webhookAllowPrivateUrls).toBe(false)
    // A base URL given is taken as it is: the operator names the public URL.
    const given = configFromEnv({ ...env, ISSUING_BASE_URL: "https://app.example.com/issuing/" }, { basePath: "/issuing" })
    expect(given.settings.baseUrl).toBe("https://app.example.com/issuing")
    expect(configFromEnv(env).basePath).toBe("")
    expect(configFromEnv(env).settings.baseUrl).toBe("http://127.0.0.1:8080")
  })

  it("warns at start when the base URL does not end with the mount path, names every interface or port 0", async () => {
    const outside = await platform({ basePath: "/issuing", baseUrl: "http://127.0.0.1:8080" })
    expect(outside.lines.filter((line) => line.startsWith("warning:"))).toEqual([
      expect.stringContaining("the base URL http://127.0.0.1:8080 does not end with the mount path /issuing")
    ])
    const unreachable = await platform({ basePath: "/issuing", baseUrl: "http://0.0.0.0:0/issuing" })
    const warnings = unreachable.lines.filter((line) => line.startsWith("warning:"))
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toContain("names the address of every interface")
    expect(warnings[1]).toContain("names port 0")
    // Behind a proxy that adds a prefix, the base URL's path ends with the mount path: nothing to say.
    const proxied = await platform({ basePath: "/issuing", baseUrl: "https://example.com/apps/issuing" })
    expect(proxied.lines.filter((line) => line.startsWith("warning:"))).toEqual([])
  })

  it("warns once, at the first request, when private targets are allowed on a server listening beyond loopback", async () => {
    const listenOn = async (host: string, allowPrivate: boolean) => {
      const { issuing, lines } = await platform({ baseUrl: "http://127.0.0.1:1", allowPrivate })
      const server = http.createServer(issuing.listener)
      running.at(-1)!.server = server
      await new Promise<void>((resolve) => server.listen(0, host, resolve))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.json`
      for (let i = 0; i < 2; i++) expect((await fetch(url)).status).toBe(200)
      return lines.filter((line) => line.startsWith("warning:"))
    }
    const everywhere = await listenOn("0.0.0.0", true)
    expect(everywhere).toHaveLength(1)
    expect(everywhere[0]).toContain("private webhook targets are allowed")
    expect(everywhere[0]).toContain("listening on 0.0.0.0")
    expect(await listenOn("0.0.0.0", false)).toEqual([])
    expect(await listenOn("127.0.0.1", true)).toEqual([])
  })
})
