import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../support/databases.js"
import { cleanEnv, codeBlocks, freePort, PACKAGES, ROOT, run, runOk, type Started, start } from "./support.js"

// The packages as a new user gets them: packed (prepack builds from source), installed from the
// tarballs into fresh projects under the OS temp folder (no workspace, no links, no path
// aliases), running the README's embedding files as they stand and the installed `issuing` bin.

const README = path.join(ROOT, "README.md")
const VAULT_KEY = Buffer.alloc(32, 7).toString("base64")
const ADMIN_KEY = "sk_packaging_test_admin_key_long_enough"
/** The host app's environment: the ISSUING_* variables configFromEnv reads (the receiver is on loopback). */
const HOST_ENV = {
  ISSUING_VAULT_KEY: VAULT_KEY,
  ISSUING_BOOTSTRAP_API_KEY: ADMIN_KEY,
  ISSUING_BASE_URL: "https://app.example.com/issuing",
  ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS: "true"
}
const NPM_INSTALL = ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]
const versionOf = (name: string) =>
  (JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }).version

interface Packed {
  readonly name: string
  readonly filename: string
  readonly size: number
  readonly unpackedSize: number
  readonly files: ReadonlyArray<{ readonly path: string }>
}

/** The README's embedding section: install lines per store, and the files by their first-line name. */
const readmeEmbedding = () => {
  const blocks = codeBlocks(README, "Embedding in your application")
  const files = new Map<string, string>()
  for (const block of blocks.filter((block) => block.lang === "ts")) {
    const title = /^\/\/ (.+)\n/.exec(block.code)?.[1]
    if (title === undefined) throw new Error(`A ts block of the README's embedding section has no // file name line:\n${block.code}`)
    files.set(title, block.code)
  }
  const installs = blocks
    .filter((block) => block.lang === "sh")
    .flatMap((block) => block.code.split("\n"))
    .filter((line) => line.startsWith("npm install "))
    .map((line) => line.replace(/#.*$/, "").trim().split(/\s+/).slice(2))
  const file = (title: string) => {
    const code = files.get(title)
    if (code === undefined)
      throw new Error(`The README's embedding section has no "// ${title}" block (has: ${[...files.keys()].join(", ")})`)
    return code
  }
  const install = (store: string) => {
    const line = installs.find((packages) => packages.includes(store))
    if (line === undefined) throw new Error(`The README's embedding section has no npm install line with ${store}`)
    return line
  }
  return {
    server: file("server.ts"),
    sqliteStore: file("store.ts, on SQLite"),
    pgStore: file("store.ts, on PostgreSQL"),
    sqliteInstall: install("@issuing/store-sqlite"),
    pgInstall: install("@issuing/store-pg")
  }
}

// Drives the README's server.ts (its variant folder by argument): one request through `handler`,
// one through `listener`, then a webhook subscription and an event, delivered by the host's own
// process with nothing else running (verified with the standardwebhooks package where the project
// has it), and prints the answers as one JSON line.
const DRIVER = `import * as http from "node:http"
import type { AddressInfo } from "node:net"
const variant = process.argv[2]
// The receiver listens before the platform starts.
const received: Array<{ headers: Record<string, string>; body: string }> = []
let arrived!: () => void
const delivered = new Promise<void>((resolve) => (arrived = resolve))
const receiver = http.createServer((request, response) => {
  let body = ""
  request.on("data", (chunk) => (body += chunk))
  request.on("end", () => {
    received.push({ headers: request.headers as Record<string, string>, body })
    response.writeHead(204).end()
    arrived()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverUrl = \`http://127.0.0.1:\${(receiver.address() as AddressInfo).port}/hooks\`

const { issuing, GET }: typeof import("./sqlite/server.js") = await import(\`./\${variant}/server.js\`)
const headers = { authorization: \`Bearer \${process.env.ISSUING_BOOTSTRAP_API_KEY}\` }
const viaHandler = await GET(new Request("https://app.example.com/issuing/v1/programs", { headers }))
const viaListener = await fetch(\`http://127.0.0.1:\${process.env.ISSUING_PORT}/issuing/v1/programs\`, { headers })
const answer = async (response: Response): Promise<{ status: number; body: any }> => ({ status: response.status, body: await response.json() })
const handler = await answer(viaHandler)
const listener = await answer(viaListener)

const post = (path: string, body: unknown) =>
  GET(
    new Request(\`https://app.example.com/issuing\${path}\`, {
      method: "POST",
      headers: { ...headers, "x-program-id": handler.body.data[0].id, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
  )
const subscription = await answer(await post("/v1/webhook-subscriptions", { url: receiverUrl, event_types: ["wallet.created"] }))
const wallet = await answer(await post("/v1/wallets", { holder: { name: "Host app" } }))
const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no delivery within 30 s")), 30_000))
await Promise.race([delivered, timeout])
let verified: string | null = null
if (variant === "sqlite") {
  const { Webhook } = await import("standardwebhooks")
  verified = (new Webhook(subscription.body.secret).verify(received[0]!.body, received[0]!.headers) as { type: string }).type
}
const event = JSON.parse(received[0]!.body)
const delivery = { subscription: subscription.status, wallet: wallet.body.id, type: event.type, object: event.data.object.id, verified }
console.log(JSON.stringify({ handler, listener, delivery }))
await issuing.dispose()
receiver.close()
process.exit(0)
`

// Checked against the installed declarations; the expected errors prove the types are real, not any.
const TYPES_CHECK = `import { Cards, type IssuingSettings } from "@issuing/core"
import {
  bootstrapOrganization,
  configFromEnv,
  createIssuing,
  type IssuingInstance,
  loadConfig,
  type StoreLayer,
  StorePackageMissing
} from "@issuing/http"
import * as PgStore from "@issuing/store-pg"
import * as SqliteStore from "@issuing/store-sqlite"
import { type Card, IssuingClient, NotFoundError, verifyWebhook, withCardDisplayFrameSrc } from "@issuing/client"
import { makeEffectClient } from "@issuing/client/effect"

const stores: ReadonlyArray<StoreLayer> = [SqliteStore.layer({ filename: ":memory:" }), PgStore.layer({ url: "postgres://localhost/x" })]
export const make = (store: StoreLayer): Promise<IssuingInstance> => createIssuing({ store, vaultKeys: [Buffer.alloc(32)] })
export const handle = (instance: IssuingInstance, request: Request): Promise<Response> => instance.handler(request)
export const missing: Error = new StorePackageMissing("postgres")
export const fromEnv = (): Promise<IssuingInstance> => createIssuing({ ...configFromEnv(), background: false, log: null })
export const firstKey = async (instance: IssuingInstance): Promise<string | undefined> => (await bootstrapOrganization(instance))?.api_key
export const config = loadConfig({ ISSUING_DATABASE_URL: "sqlite::memory:" })
export { Cards, stores }
export const settings: Partial<IssuingSettings> = { baseUrl: "https://app.example.com/issuing" }

// @ts-expect-error vaultKeys is required
createIssuing({ store: stores[0]! })
// @ts-expect-error a store layer takes options, not a string
SqliteStore.layer("./issuing.db")

export const client = new IssuingClient({ apiKey: "sk_sandbox_x", baseUrl: "https://issuing.example.com" })
export const cards = (): AsyncIterable<Card> => client.cards.list({ page_size: 100 })
export const lastFour = (card: Card): string => card.last_four
export const policy: string = withCardDisplayFrameSrc("frame-src 'none'", "https://issuing.example.com")
export { makeEffectClient, NotFoundError, verifyWebhook }
// @ts-expect-error a wallet needs a holder
client.wallets.create({})
// @ts-expect-error amount is a number of minor units
client.transfers.create({ paymentRail: "book", amount: "10", currency: "USD" })
`

// The installed @issuing/client, run against `issuing serve`.
const CLIENT_SCRIPT = `import { IssuingClient, NotFoundError } from "@issuing/client"
const client = new IssuingClient({ apiKey: process.env.ISSUING_API_KEY, baseUrl: process.env.ISSUING_URL })
const programs = []
for await (const program of client.programs.list()) programs.push(program)
const missing = await client.programs.retrieve("00000000-0000-0000-0000-000000000000").catch((error) => error)
console.log(JSON.stringify({ programs: programs.length, missing: missing instanceof NotFoundError ? missing.name : String(missing) }))
`

// The main entry with nothing but @issuing/client installed: a list and a typed error against a
// canned server, a delivery verified (signed here as Standard Webhooks signs), and the optional
// Effect entry failing to load for want of effect.
const CLIENT_ONLY_SCRIPT = `import * as crypto from "node:crypto"
import * as http from "node:http"
import { IssuingClient, NotFoundError, verifyWebhook } from "@issuing/client"
const server = http.createServer((request, response) => {
  const found = request.url.startsWith("/v1/programs?")
  response.writeHead(found ? 200 : 404, { "content-type": "application/json" })
  response.end(JSON.stringify(found ? { data: [{ id: "p1", object: "program" }], total_count: 1 } : { error: { type: "not_found_error", code: "not_found", message: "No such program.", param: "program_id", request_id: "r", doc_url: "d" } }))
})
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
const client = new IssuingClient({ apiKey: "sk_sandbox_x", baseUrl: \`http://127.0.0.1:\${server.address().port}\` })
const programs = []
for await (const program of client.programs.list()) programs.push(program.id)
const missing = await client.programs.retrieve("p2").catch((error) => error)
const secret = crypto.randomBytes(24)
const body = JSON.stringify({ id: "evt_1", object: "event", type: "card.created", program_id: "p1", created_at: "2026-01-01T00:00:00.000Z", data: { object: { id: "c1" } } })
const timestamp = String(Math.floor(Date.now() / 1000))
const signature = crypto.createHmac("sha256", secret).update(\`evt_1.\${timestamp}.\${body}\`).digest("base64")
const event = verifyWebhook(body, { "webhook-id": "evt_1", "webhook-timestamp": timestamp, "webhook-signature": \`v1,\${signature}\` }, \`whsec_\${secret.toString("base64")}\`)
const effectEntry = await import("@issuing/client/effect").then(() => "loaded", (error) => error.code)
server.close()
console.log(JSON.stringify({ programs, missing: missing instanceof NotFoundError ? missing.name : String(missing), event: event.type, effectEntry }))
`

// Type-checked against the client-only install: the main entry's declarations stand without effect.
const CLIENT_ONLY_TYPES = `import { type Card, IssuingClient, type WebhookEvent } from "@issuing/client"
export const client = new IssuingClient({ apiKey: "sk_sandbox_x", baseUrl: "https://issuing.example.com" })
export const lastFour = (event: WebhookEvent): string | null => (event.type === "card.created" ? event.data.object.last_four : null)
export const cards = (): AsyncIterable<Card> => client.cards.list({ state: "ACTIVE" })
// @ts-expect-error amount is a number of minor units
client.transfers.create({ paymentRail: "book", amount: "10", currency: "USD" })
`

const tsconfig = (compilerOptions: Record<string, unknown>, include: ReadonlyArray<string>) =>
  JSON.stringify(
    {
      compilerOptions: { target: "ES2022", lib: ["ES2022"], types: ["node"], strict: true, skipLibCheck: true, ...compilerOptions },
      include
    },
    null,
    2
  )

const writeFiles = (dir: string, files: Record<string, string>) => {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
}

/**
 * better-sqlite3's install script looks for a prebuilt binary (GitHub, then a local folder) before
 * it compiles SQLite from source, a minute or more of CPU. When the workspace's own better-sqlite3
 * is the version @issuing/store-sqlite asks for, its binary, built by this machine's `npm ci` for
 * this Node, is offered as that local prebuild: the environment for the installing npm (empty when
 * the versions differ, and the host app's install compiles as a user's would).
 */
const localSqlitePrebuild = async (dir: string): Promise<Record<string, string>> => {
  const wanted = JSON.parse(fs.readFileSync(path.join(ROOT, "packages/store-sqlite/package.json"), "utf8")).dependencies["better-sqlite3"]
  const workspace = path.join(ROOT, "node_modules/better-sqlite3")
  const binary = "build/Release/better_sqlite3.node"
  if (versionOf("better-sqlite3") !== wanted || !fs.existsSync(path.join(workspace, binary))) return {}
  const prebuilds = path.join(dir, "prebuilds")
  fs.mkdirSync(prebuilds, { recursive: true })
  // The file name prebuild-install asks for: {name}-v{version}-{runtime}-v{abi}-{platform}-{arch}.tar.gz.
  const file = `better-sqlite3-v${wanted}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  await runOk("tar", ["-czf", path.join(prebuilds, file), "-C", workspace, binary], { cwd: ROOT })
  return { npm_config_better_sqlite3_local_prebuilds: prebuilds }
}

/** A fresh npm project outside the workspace that may build better-sqlite3's native binary. */
const newProject = (name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `issuing-${name}-`))
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: `issuing-packaging-${name}`, private: true, type: "module", allowScripts: { "better-sqlite3": true } }, null, 2)
  )
  return dir
}

let packDir: string
const packed = new Map<string, Packed>()
const tarball = (name: string) => path.join(packDir, packed.get(name)!.filename)
let fullApp: string
let pgApp: string
let clientApp: string
const databases: Array<TestDatabase> = []
const running: Array<Started> = []

beforeAll(async () => {
  const { sqliteInstall, pgInstall } = readmeEmbedding()
  packDir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-pack-"))
  fullApp = newProject("app")
  pgApp = newProject("pg-app")
  clientApp = newProject("client-app")
  expect(path.relative(ROOT, fullApp).startsWith("..")).toBe(true)
  // The full project's registry packages install while the packages build: better-sqlite3 (the
  // version @issuing/store-sqlite asks for; its binary from the local prebuild, or compiled), and
  // the tarballs' install then finds it in place.
  const sqliteDriver = JSON.parse(fs.readFileSync(path.join(ROOT, "packages/store-sqlite/package.json"), "utf8")).dependencies[
    "better-sqlite3"
  ]
  const sqlitePrebuild = cleanEnv(await localSqlitePrebuild(packDir))
  const registryPackages = runOk(
    "npm",
    [...NPM_INSTALL, `better-sqlite3@${sqliteDriver}`, `typescript@${versionOf("typescript")}`, `@types/node@${versionOf("@types/node")}`],
    { cwd: fullApp, env: sqlitePrebuild, timeoutMs: 360_000 }
  )
  registryPackages.catch(() => {}) // awaited below; a failed pack must not leave it unhandled
  // `npm run pack`, as the README tells host apps: one `npm pack` for the five, each package's
  // prepack cleaning its dist and building it (tsc -b), into one folder.
  const pack = await runOk("node", [path.join(ROOT, "scripts/pack.js"), packDir, "--json"], { cwd: ROOT, timeoutMs: 420_000 })
  for (const entry of JSON.parse(pack.stdout) as Array<Packed>) packed.set(entry.name, entry)
  expect([...packed.keys()].sort()).toEqual(PACKAGES.map((dir) => `@issuing/${dir}`).sort())

  // The full project takes all five and what type-checks the README's files; the PostgreSQL one
  // takes the README's PostgreSQL line (and @issuing/core, unpublished here, which it depends on).
  const pgOnly = [...new Set(["@issuing/core", ...pgInstall])]
  expect(pgOnly.sort()).toEqual(["@issuing/core", "@issuing/http", "@issuing/store-pg"])
  expect(sqliteInstall.sort()).toEqual(["@issuing/http", "@issuing/store-sqlite"])
  await Promise.all([
    registryPackages.then(() =>
      runOk("npm", [...NPM_INSTALL, ...[...packed.keys()].map(tarball)], { cwd: fullApp, env: sqlitePrebuild, timeoutMs: 240_000 })
    ),
    runOk("npm", [...NPM_INSTALL, ...pgOnly.map(tarball)], { cwd: pgApp, timeoutMs: 240_000 }),
    runOk("npm", [...NPM_INSTALL, tarball("@issuing/client")], { cwd: clientApp, timeoutMs: 240_000 })
  ])
}, 600_000)

afterAll(async () => {
  for (const started of running) started.kill()
  for (const database of databases) await database.drop()
  for (const dir of [packDir, fullApp, pgApp, clientApp]) if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true })
})

describe("the packed packages", () => {
  it("hold built JavaScript, declarations, source maps, sources and a README, nothing stale; exports and bin resolve", () => {
    const sizes: Array<string> = []
    for (const entry of packed.values()) {
      const files = new Set(entry.files.map((file) => file.path))
      for (const needed of [
        "package.json",
        "README.md",
        "dist/index.js",
        "dist/index.d.ts",
        "dist/index.js.map",
        "dist/index.d.ts.map",
        "src/index.ts"
      ]) {
        expect(files.has(needed), `${entry.name} packs ${needed}`).toBe(true)
      }
      for (const file of files) {
        expect(file, `${entry.name} packs no build info or tests`).not.toMatch(/tsbuildinfo|\.test\.|^test\//)
        // Every built module comes from a source of this build (prepack starts from an empty dist).
        // The console's bundle is the one exception: made from src/console/browser/ by esbuild.
        const built = file === "dist/console/console.js" ? null : /^dist\/(.+)\.js$/.exec(file)
        if (built !== null) expect(files.has(`src/${built[1]}.ts`), `${entry.name}: ${file} has its source`).toBe(true)
      }
      const manifest = JSON.parse(
        fs.readFileSync(path.join(ROOT, "packages", entry.name.slice("@issuing/".length), "package.json"), "utf8")
      )
      expect(manifest).toMatchObject({ license: "Apache-2.0", engines: { node: ">=20" }, type: "module" })
      expect(manifest.repository.url).toMatch(/^git\+https:/)
      for (const target of Object.values(manifest.exports as Record<string, string | Record<string, string>>)) {
        for (const file of typeof target === "string" ? [target] : Object.values(target)) {
          expect(files.has(file.replace(/^\.\//, "")), `${entry.name} export ${file}`).toBe(true)
        }
      }
      for (const [dependency, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies } as Record<
        string,
        string
      >)) {
        // A caret range on the same 0.minor line, so npm resolves it once the five are published.
        if (!dependency.startsWith("@issuing/")) continue
        const [major, minor, patch] = (manifest.version as string).split(".").map(Number) as [number, number, number]
        const ranged = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range)
        expect(ranged, `${entry.name} → ${dependency} ${range}`).not.toBeNull()
        expect([Number(ranged![1]), Number(ranged![2])], `${entry.name} → ${dependency} ${range}`).toEqual([major, minor])
        expect(Number(ranged![3])).toBeLessThanOrEqual(patch)
      }
      sizes.push(
        `${entry.name} ${entry.filename}: ${(entry.size / 1024).toFixed(1)} kB packed, ${(entry.unpackedSize / 1024).toFixed(1)} kB unpacked, ${entry.files.length} files`
      )
    }
    expect(packed.get("@issuing/http")!.files.map((file) => file.path)).toContain("bin/issuing.js")
    // The console's bundle, built by prepack, and its stylesheet (docs/console.md).
    expect(packed.get("@issuing/http")!.files.map((file) => file.path)).toContain("dist/console/console.js")
    expect(packed.get("@issuing/http")!.files.map((file) => file.path)).toContain("src/console/browser/console.css")
    console.log(`Packed sizes:\n${sizes.join("\n")}`)
  })
})

describe("installed from the tarballs, with both stores", () => {
  it("the README's embedding files and a types check type-check under node16 and bundler resolution", async () => {
    const readme = readmeEmbedding()
    writeFiles(fullApp, {
      "sqlite/store.ts": readme.sqliteStore,
      "sqlite/server.ts": readme.server,
      "postgres/store.ts": readme.pgStore,
      "postgres/server.ts": readme.server,
      "drive.ts": DRIVER,
      "types-check.ts": TYPES_CHECK,
      "tsconfig.json": tsconfig({ module: "node16", moduleResolution: "node16", rootDir: ".", outDir: "out" }, [
        "sqlite",
        "postgres",
        "*.ts"
      ]),
      "tsconfig.bundler.json": tsconfig({ module: "preserve", moduleResolution: "bundler", noEmit: true }, ["sqlite", "postgres", "*.ts"])
    })
    const tsc = path.join(fullApp, "node_modules/typescript/bin/tsc")
    await Promise.all([
      runOk(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: fullApp }),
      runOk(process.execPath, [tsc, "-p", "tsconfig.bundler.json"], { cwd: fullApp })
    ])
    expect(fs.existsSync(path.join(fullApp, "out/sqlite/server.js"))).toBe(true)
  }, 180_000)

  it("the README's embedding runs on SQLite: one request through handler, one through listener", async () => {
    const cwd = fs.mkdtempSync(path.join(fullApp, "run-"))
    const port = await freePort()
    const result = await runOk(process.execPath, [path.join(fullApp, "out/drive.js"), "sqlite"], {
      cwd,
      env: cleanEnv({ ...HOST_ENV, ISSUING_PORT: String(port) }),
      timeoutMs: 60_000
    })
    const answers = JSON.parse(result.stdout.trim().split("\n").at(-1)!)
    expect(answers.handler.status, result.stdout).toBe(200)
    expect(answers.listener.status, result.stdout).toBe(200)
    expect(answers.handler.body.data).toHaveLength(1)
    expect(answers.listener.body.data[0].id).toBe(answers.handler.body.data[0].id)
    expect(fs.existsSync(path.join(cwd, "issuing.db"))).toBe(true)
    // Delivered by the host's own process, signed as Standard Webhooks.
    expect(answers.delivery).toMatchObject({ subscription: 200, type: "wallet.created", verified: "wallet.created" })
    expect(answers.delivery.object).toBe(answers.delivery.wallet)
    expect(result.stdout).toContain("background work (webhook delivery, hold expiry, purges) runs in this process")
    expect(result.stdout).toContain("admin API key")
  }, 90_000)

  it("npx issuing serve runs from the installed bin", async () => {
    const server = start("npx", ["--offline", "issuing", "serve"], {
      cwd: fullApp,
      env: cleanEnv({ ISSUING_PORT: "0", ISSUING_BOOTSTRAP_API_KEY: ADMIN_KEY })
    })
    running.push(server)
    const output = await server.waitFor(/listening on (http:\/\/\S+)/)
    expect(output).toContain("store sqlite:./.data/issuing.db")
    const url = /listening on (http:\/\/\S+)/.exec(output)![1]!
    const response = await fetch(`${url}/v1/programs`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    expect(response.status).toBe(200)
    // The console is served from the installed package's files: its bundle was built at pack time.
    for (const asset of ["/console", "/console/console.js", "/console/console.css"]) {
      expect((await fetch(`${url}${asset}`)).status, asset).toBe(200)
    }
    // The installed client against it: a list through the plain client, an error through the typed one.
    const viaClient = await runOk(process.execPath, ["--input-type=module", "-e", CLIENT_SCRIPT], {
      cwd: fullApp,
      env: cleanEnv({ ISSUING_URL: url, ISSUING_API_KEY: ADMIN_KEY })
    })
    expect(JSON.parse(viaClient.stdout.trim())).toEqual({ programs: 1, missing: "NotFoundError" })
    // Both npx and the server get it, as from a terminal's Ctrl-C or a supervisor's stop.
    server.signal("SIGTERM")
    await server.closed
    expect(await server.waitFor(/SIGTERM received, shutting down/)).not.toContain("shutdown failed")
    await expect(fetch(`${url}/v1/programs`)).rejects.toThrow()
  }, 90_000)
})

describe("installed with only @issuing/http and @issuing/store-pg", () => {
  it("has neither the SQLite store nor better-sqlite3", async () => {
    for (const absent of ["@issuing/store-sqlite", "better-sqlite3"]) {
      expect(fs.existsSync(path.join(pgApp, "node_modules", absent)), absent).toBe(false)
    }
    const lock = fs.readFileSync(path.join(pgApp, "package-lock.json"), "utf8")
    expect(lock).not.toContain("better-sqlite3")
    expect(fs.existsSync(path.join(pgApp, "node_modules/pg"))).toBe(true)
  })

  it("the README's embedding runs on PostgreSQL: one request through handler, one through listener", async () => {
    // The JavaScript tsc made of the README's files in the full project; run here, its imports
    // resolve in this project only.
    fs.cpSync(path.join(fullApp, "out"), path.join(pgApp, "out"), { recursive: true })
    const database = await createTestDatabase("postgres")
    databases.push(database)
    const port = await freePort()
    const result = await runOk(process.execPath, [path.join(pgApp, "out/drive.js"), "postgres"], {
      cwd: pgApp,
      env: cleanEnv({ ...HOST_ENV, DATABASE_URL: database.url, ISSUING_PORT: String(port) }),
      timeoutMs: 60_000
    })
    const answers = JSON.parse(result.stdout.trim().split("\n").at(-1)!)
    expect(answers.handler.status, result.stdout).toBe(200)
    expect(answers.listener.status, result.stdout).toBe(200)
    expect(answers.listener.body.data[0].id).toBe(answers.handler.body.data[0].id)
    expect(answers.delivery).toMatchObject({ subscription: 200, type: "wallet.created" })
    expect(answers.delivery.object).toBe(answers.delivery.wallet)
  }, 90_000)

  it("npx issuing serve runs on PostgreSQL, and a sqlite: URL stops with one line naming the package to install", async () => {
    const database = await createTestDatabase("postgres")
    databases.push(database)
    const server = start("npx", ["--offline", "issuing", "serve"], {
      cwd: pgApp,
      env: cleanEnv({ ISSUING_DATABASE_URL: database.url, ISSUING_PORT: "0", ISSUING_BOOTSTRAP_API_KEY: ADMIN_KEY })
    })
    running.push(server)
    const output = await server.waitFor(/listening on (http:\/\/\S+)/)
    const url = /listening on (http:\/\/\S+)/.exec(output)![1]!
    const response = await fetch(`${url}/v1/programs`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    expect(response.status).toBe(200)
    // Both npx and the server get it, as from a terminal's Ctrl-C or a supervisor's stop.
    server.signal("SIGTERM")
    await server.closed
    expect(await server.waitFor(/SIGTERM received, shutting down/)).not.toContain("shutdown failed")
    await expect(fetch(`${url}/v1/programs`)).rejects.toThrow()

    const refused = await run(path.join(pgApp, "node_modules/.bin/issuing"), ["migrate"], {
      cwd: pgApp,
      env: cleanEnv({ ISSUING_DATABASE_URL: "sqlite:./.data/issuing.db" })
    })
    expect(refused.code).toBe(78)
    const lines = refused.stderr.trim().split("\n")
    expect(lines, refused.stderr).toHaveLength(1)
    expect(lines[0]).toContain("ISSUING_DATABASE_URL")
    expect(lines[0]).toContain("npm install @issuing/store-sqlite")
  }, 90_000)
})

describe("installed with only @issuing/client", () => {
  it("has no effect, @effect/* or @issuing/core, and its main entry runs and type-checks without them", async () => {
    for (const absent of ["effect", "@effect", "@issuing/core", "@issuing/http"]) {
      expect(fs.existsSync(path.join(clientApp, "node_modules", absent)), absent).toBe(false)
    }
    const result = await runOk(process.execPath, ["--input-type=module", "-e", CLIENT_ONLY_SCRIPT], { cwd: clientApp })
    expect(JSON.parse(result.stdout.trim())).toEqual({
      programs: ["p1"],
      missing: "NotFoundError",
      event: "card.created",
      effectEntry: "ERR_MODULE_NOT_FOUND"
    })
    writeFiles(clientApp, {
      "types-check.ts": CLIENT_ONLY_TYPES,
      "tsconfig.json": tsconfig({ module: "node16", moduleResolution: "node16", lib: ["ES2022", "DOM"], types: [], noEmit: true }, ["*.ts"])
    })
    // The full project's TypeScript, over this project's node_modules only.
    await runOk(process.execPath, [path.join(fullApp, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: clientApp })
  }, 120_000)
})
