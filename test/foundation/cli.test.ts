import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { runCli, spawnCli, waitForOutput } from "../support/cli.js"
import { createTestDatabase, type TestDatabase } from "../support/databases.js"

const dirs: Array<string> = []
const databases: Array<TestDatabase> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-cli-"))
  dirs.push(dir)
  return dir
}
afterAll(async () => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  for (const database of databases) await database.drop()
})

const VAULT_KEY = Buffer.alloc(32, 9).toString("base64")

/** GET with a bearer key against a running server. */
const get = async (url: string, key: string) => {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
  return { status: response.status, body: (await response.json()) as any }
}

/** Writes raw bytes to a server and reads everything it answers until it closes the connection. */
const rawExchange = (url: string, bytes: string) =>
  new Promise<string>((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes))
    let text = ""
    socket.on("data", (chunk) => (text += chunk))
    socket.on("close", () => resolve(text))
    socket.on("error", reject)
  })

// The `issuing` command (README.md#the-command-line), spawned from source.
describe("the issuing CLI", () => {
  it("stops on bad configuration with one stderr line naming the variable, never echoing a secret", async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ["ISSUING_DATABASE_URL", { ISSUING_DATABASE_URL: "mysql://root:hunter2@db/x" }],
      ["ISSUING_VAULT_KEY", { ISSUING_VAULT_KEY: "hunter2hunter2" }]
    ]
    const results = await Promise.all(cases.map(([, env]) => runCli(["serve"], env, tempDir())))
    for (const [index, [variable]] of cases.entries()) {
      const result = results[index]!
      expect(result.code, variable).not.toBe(0)
      const lines = result.stderr.trim().split("\n")
      expect(lines, result.stderr).toHaveLength(1)
      expect(lines[0]).toContain(variable)
      expect(result.stderr + result.stdout).not.toContain("hunter2")
      expect(result.stdout).not.toContain("listening")
    }
  })

  it("answers a command line it cannot run with what it did not understand, the usage, and exit 64", async () => {
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [[], "a command is needed"],
      [["orgs"], "orgs needs a subcommand: orgs create --name NAME"],
      [["orgs", "delete"], "unknown orgs command 'delete'"],
      [["orgs", "create", "--name", "Acme", "--force"], "orgs create does not take '--force'"],
      [["orgs", "create"], "orgs create needs --name NAME"],
      [["serve", "--port=9000"], "serve takes no option '--port=9000'"],
      [["migrate", "now"], "migrate takes no argument 'now'"],
      [["vault"], "vault needs a subcommand: vault reseal"],
      [["--verbose"], "unknown option '--verbose'"],
      [["deploy"], "unknown command 'deploy'"]
    ]
    // The CLI's own entry, in this process (a usage error stops before reading any configuration);
    // two of them also as the real command, for the process's exit code.
    const { main } = await import("../../packages/http/src/cli.js")
    for (const [args, problem] of cases) {
      const written: Array<string> = []
      const write = process.stderr.write
      process.stderr.write = ((chunk: string) => written.push(chunk) > 0) as typeof process.stderr.write
      let code: number
      try {
        code = await main(args)
      } finally {
        process.stderr.write = write
      }
      const stderr = written.join("")
      expect(code, args.join(" ")).toBe(64)
      expect(stderr.split("\n")[0]).toBe(`issuing: ${problem}`)
      expect(stderr).toContain("Usage: issuing <command>")
    }
    const spawned = await Promise.all([runCli(["orgs"], {}, tempDir()), runCli(["serve", "--port=9000"], {}, tempDir())])
    for (const result of spawned) {
      expect(result.code).toBe(64)
      expect(result.stdout).toBe("")
    }
  }, 120_000)

  it("says which forms a true/false variable takes, and names the PostgreSQL host and cause it cannot reach", async () => {
    const [flag, unreachable] = await Promise.all([
      runCli(["migrate"], { ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS: "maybe" }, tempDir()),
      // Port 1 on loopback: nothing listens there.
      runCli(["migrate"], { ISSUING_DATABASE_URL: "postgres://issuing:s3cret-pw@127.0.0.1:1/ledger" }, tempDir())
    ])
    expect(flag.code).toBe(78)
    expect(flag.stderr).toContain("ISSUING_WEBHOOK_ALLOW_PRIVATE_URLS must be true or false: true, 1 or yes, false, 0 or no")
    expect(unreachable.code).toBe(1)
    expect(unreachable.stderr.trim()).toBe(
      "issuing: migrate failed: cannot use PostgreSQL at 127.0.0.1:1/ledger (ISSUING_DATABASE_URL): connection refused: is PostgreSQL running and listening on that address and port? [ECONNREFUSED]"
    )
    expect(unreachable.stderr).not.toContain("s3cret-pw")
  }, 120_000)

  it("migrate, then orgs create prints one JSON object whose key works against serve, which then creates nothing", async () => {
    const dir = tempDir()
    const env = { ISSUING_DATABASE_URL: `sqlite:${path.join(dir, "orgs.db")}`, ISSUING_VAULT_KEY: VAULT_KEY, ISSUING_PORT: "0" }
    const migrated = await runCli(["migrate"], env, dir)
    expect(migrated.code, migrated.stderr).toBe(0)
    expect(migrated.stdout).toMatch(/applied 0001_access, 0002_idempotency, 0003_events/)
    const again = await runCli(["migrate"], env, dir)
    expect(again.code).toBe(0)
    expect(again.stdout).toContain("no pending migrations")
    const missingName = await runCli(["orgs", "create"], env, dir)
    expect(missingName.code).not.toBe(0)
    expect(missingName.stderr).toContain("--name")

    const created = await runCli(["orgs", "create", "--name", "Acme Cards"], env, dir)
    expect(created.code, created.stderr).toBe(0)
    const printed = JSON.parse(created.stdout)
    expect(Object.keys(printed).sort()).toEqual(["api_key", "organization_id", "program_id"])
    const inline = await runCli(["orgs", "create", "--name=Acme Two"], env, dir)
    expect(inline.code, inline.stderr).toBe(0)
    expect(JSON.parse(inline.stdout).organization_id).not.toBe(printed.organization_id)
    expect((await runCli(["orgs", "create", "--name="], env, dir)).code).not.toBe(0)

    const server = spawnCli(["serve"], env, dir)
    try {
      const output = await waitForOutput(server, /listening on (http:\/\/\S+)/)
      expect(output).not.toContain("Admin API key")
      const url = /listening on (http:\/\/\S+)/.exec(output)![1]!
      const listed = await get(`${url}/v1/programs`, printed.api_key)
      expect(listed.status).toBe(200)
      expect(listed.body.data.map((program: { id: string }) => program.id)).toEqual([printed.program_id])
    } finally {
      server.kill("SIGTERM")
    }
  }, 120_000)

  it("serve on an empty database prints the URL, the admin key and the program; SIGTERM drains an in-flight request", async () => {
    const dir = tempDir()
    const server = spawnCli(["serve"], { ISSUING_DATABASE_URL: `sqlite:${path.join(dir, "serve.db")}`, ISSUING_PORT: "0" }, dir)
    const exited = new Promise<number | null>((resolve) => server.on("exit", (code) => resolve(code)))
    const output = await waitForOutput(server, /listening on (http:\/\/\S+)/)
    const url = /listening on (http:\/\/\S+)/.exec(output)![1]!
    const key = /Admin API key[^:]*: (sk_sandbox_\S+)/.exec(output)![1]!
    const programId = /X-Program-ID: (\S+)/.exec(output)![1]!
    // The sandbox vault key was generated beside the database's working directory.
    expect(fs.existsSync(path.join(dir, ".data/vault.key"))).toBe(true)
    const listed = await get(`${url}/v1/programs`, key)
    expect(listed.status).toBe(200)
    expect(listed.body.data[0].id).toBe(programId)
    // Without ISSUING_BASE_URL the public base is the real listen address, even with port 0.
    expect(output).toContain(`(public base URL ${url})`)
    const denied = await get(`${url}/v1/programs`, "sk_sandbox_unknown_key_value")
    expect(denied.body.error.doc_url).toBe(`${url}/docs/errors/authentication_error`)

    // Requests Node's own parser refuses get the envelope and a Request-Id too, then the connection closes.
    const refused: Array<[string, string, string]> = [
      [`GET /v1/programs?q=${"x".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, "431", "request_header_too_large"],
      ["NOT HTTP AT ALL\r\n\r\n", "400", "invalid_request"]
    ]
    for (const [bytes, status, code] of refused) {
      const answer = await rawExchange(url, bytes)
      const [head, payload] = answer.split("\r\n\r\n")
      expect(head!.split("\r\n")[0]).toBe(`HTTP/1.1 ${status} ${status === "431" ? "Request Header Fields Too Large" : "Bad Request"}`)
      const requestId = /\r\nRequest-Id: (\S+)/i.exec(head!)?.[1]
      const error = JSON.parse(payload!).error
      expect(error).toEqual({
        type: "invalid_request_error",
        code,
        message: expect.any(String),
        param: null,
        request_id: requestId,
        doc_url: `${url}/docs/errors/${code}`
      })
      expect((await fetch(`${url}/docs/errors/${code}`)).status).toBe(200)
    }

    // A request whose body is still arriving when SIGTERM comes must complete.
    const body = JSON.stringify({ name: "Created during shutdown" })
    const inFlight = new Promise<{ status: number; body: any }>((resolve, reject) => {
      const request = http.request(
        `${url}/v1/programs`,
        {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) }
        },
        (response) => {
          let text = ""
          response.on("data", (chunk) => (text += chunk))
          response.on("end", () => resolve({ status: response.statusCode!, body: JSON.parse(text) }))
        }
      )
      request.on("error", reject)
      request.write(body.slice(0, 10))
      setTimeout(() => {
        server.kill("SIGTERM")
        setTimeout(() => request.end(body.slice(10)), 300)
      }, 200)
    })
    const answered = await inFlight
    expect(answered.status).toBe(200)
    expect(answered.body.name).toBe("Created during shutdown")
    expect(await exited).toBe(0)
    await expect(fetch(`${url}/v1/programs`)).rejects.toThrow()
  })

  it("migrate and serve on PostgreSQL with ISSUING_BOOTSTRAP_API_KEY: that exact secret is the admin key, not printed", async () => {
    const postgres = await createTestDatabase("postgres")
    databases.push(postgres)
    const migrated = await runCli(["migrate"], { ISSUING_DATABASE_URL: postgres.url }, tempDir())
    expect(migrated.code, migrated.stderr).toBe(0)
    expect(migrated.stdout).toMatch(/applied 0001_access/)
    const secret = `sk_sandbox_bootstrap_${Date.now()}`
    const server = spawnCli(
      ["serve"],
      {
        ISSUING_DATABASE_URL: postgres.url,
        ISSUING_BOOTSTRAP_API_KEY: secret,
        ISSUING_VAULT_KEY: VAULT_KEY,
        ISSUING_PORT: "0"
      },
      tempDir()
    )
    try {
      const output = await waitForOutput(server, /listening on (http:\/\/\S+)/)
      expect(output).not.toContain(secret)
      expect(output).not.toContain("hunter2")
      expect(output).not.toContain("postgres:postgres@")
      const url = /listening on (http:\/\/\S+)/.exec(output)![1]!
      const listed = await get(`${url}/v1/programs`, secret)
      expect(listed.status).toBe(200)
      expect(listed.body.total_count).toBe(1)
    } finally {
      server.kill("SIGTERM")
    }
  }, 120_000)
})
