import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { describe, it } from "vitest"

/** Debian's pgbouncer (`.ci/run` installs it with apt-get). */
export const PGBOUNCER_BINARY = "/usr/sbin/pgbouncer"

/**
 * Whether the tests of `suite` through PgBouncer can run: without pgbouncer they are skipped with
 * a message, except in CI (CI=true), where a test fails loudly instead — there it must be installed.
 */
export const pgbouncerAvailable = (suite: string): boolean => {
  if (fs.existsSync(PGBOUNCER_BINARY)) return true
  if (process.env.CI === "true") {
    describe(`${suite} through PgBouncer`, () => {
      it("needs PgBouncer", () => {
        throw new Error(`CI=true but ${PGBOUNCER_BINARY} is missing; .ci/run must install Debian's pgbouncer package.`)
      })
    })
  } else {
    console.warn(`Skipping the ${suite} tests through PgBouncer: ${PGBOUNCER_BINARY} is not installed (apt-get install -y pgbouncer).`)
  }
  return false
}

/** A pgbouncer in transaction mode in front of the test PostgreSQL. */
export interface Pgbouncer {
  /** `url` with its host and port replaced by the pooler's (same user, password and database). */
  readonly through: (url: string) => string
  readonly stop: () => Promise<void>
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/**
 * Starts pgbouncer (`pool_mode = transaction`, every database of the server behind `adminUrl`, a
 * random free port, its ini, user list and log in a temporary directory). Its clients
 * authenticate with the server's user and password in clear (`auth_type = plain`), which it then
 * uses towards the server (the embedded server asks for a password). It refuses to run as root,
 * so as root it runs as the user embedded PostgreSQL runs as (`postgres`).
 */
export const startPgbouncer = async (adminUrl: string): Promise<Pgbouncer> => {
  const server = new URL(adminUrl)
  const user = decodeURIComponent(server.username)
  const password = decodeURIComponent(server.password)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-pgbouncer-"))
  fs.chmodSync(dir, 0o777)
  const port = await freePort()
  const quote = (value: string) => `"${value.replaceAll('"', '""')}"`
  fs.writeFileSync(path.join(dir, "userlist.txt"), `${quote(user)} ${quote(password)}\n`, { mode: 0o644 })
  fs.writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || "5432"}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = plain",
      `auth_file = ${path.join(dir, "userlist.txt")}`,
      "pool_mode = transaction",
      "max_client_conn = 1000",
      "default_pool_size = 20",
      "ignore_startup_parameters = extra_float_digits,options",
      `logfile = ${path.join(dir, "pgbouncer.log")}`,
      ""
    ].join("\n"),
    { mode: 0o644 }
  )
  const asRoot = process.getuid?.() === 0
  const child: ChildProcess = spawn(PGBOUNCER_BINARY, [...(asRoot ? ["-u", "postgres"] : []), path.join(dir, "pgbouncer.ini")], {
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr!.on("data", (chunk) => (stderr += chunk))
  const through = (url: string) => {
    const pooled = new URL(url)
    pooled.hostname = "127.0.0.1"
    pooled.port = String(port)
    return pooled.toString()
  }
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))])
      if (child.exitCode === null) child.kill("SIGKILL")
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
  // Ready once it answers a query on the admin database.
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: through(adminUrl) })
    try {
      await client.connect()
      await client.query("SELECT 1")
      await client.end()
      return { through, stop }
    } catch (error) {
      await client.end().catch(() => undefined)
      if (child.exitCode !== null || attempt >= 100) {
        const log = fs.existsSync(path.join(dir, "pgbouncer.log")) ? fs.readFileSync(path.join(dir, "pgbouncer.log"), "utf8") : ""
        await stop()
        throw new Error(`pgbouncer did not start (${String(error)}): ${stderr}${log.slice(-2000)}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}
