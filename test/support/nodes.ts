import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { runCli, spawnCli, waitForOutput } from "./cli.js"
import type { TestDatabase } from "./databases.js"
import { TEST_VAULT_KEY } from "./platform.js"

/** The admin key every node of a cluster is bootstrapped with. */
export const NODE_ADMIN_SECRET = `sk_test_${"a1b2c3d4".repeat(5)}`

/** One `issuing serve` process. */
export interface Node {
  readonly url: string
  readonly process: ChildProcess
  /** What it printed up to its "listening on" line. */
  readonly output: string
}

/** Two `issuing serve` processes on one database (migrated first if empty), and the default program. */
export interface Cluster {
  readonly a: Node
  readonly b: Node
  readonly programId: string
  readonly stop: () => Promise<void>
}

const startNode = async (env: Record<string, string>, cwd: string): Promise<Node> => {
  const child = spawnCli(["serve"], env, cwd)
  try {
    const output = await waitForOutput(child, /listening on (http:\/\/\S+)/, 60_000)
    return { url: /listening on (http:\/\/\S+)/.exec(output)![1]!, process: child, output }
  } catch (error) {
    child.kill("SIGKILL")
    throw error
  }
}

/** Stops a node: SIGTERM, then SIGKILL if it has not exited within 10 s. */
const stopNode = (node: Node | undefined) =>
  new Promise<void>((resolve) => {
    if (node === undefined || node.process.exitCode !== null) return resolve()
    const timer = setTimeout(() => node.process.kill("SIGKILL"), 10_000)
    node.process.on("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    node.process.kill("SIGTERM")
  })

/**
 * Starts two nodes — two processes, each with its own caches and change feed — on `database`
 * (a PostgreSQL database, or one SQLite file), with `env` added to their environment.
 */
export const startCluster = async (database: TestDatabase, env: Record<string, string> = {}): Promise<Cluster> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-two-nodes-"))
  const nodeEnv = {
    ISSUING_DATABASE_URL: database.url,
    ISSUING_VAULT_KEY: TEST_VAULT_KEY.toString("base64"),
    ISSUING_BOOTSTRAP_API_KEY: NODE_ADMIN_SECRET,
    ISSUING_PORT: "0",
    ...env
  }
  // An empty database is migrated first, as an operator would before starting nodes; one made
  // from the migrated template has nothing to migrate, and a process start less is about a second
  // of CPU (docs/testing.md).
  if (!database.migrated) {
    const migrated = await runCli(["migrate"], nodeEnv, dir)
    if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.stderr}`)
  }
  const a = await startNode(nodeEnv, dir)
  const b = await startNode(nodeEnv, dir).catch(async (error) => {
    await stopNode(a)
    throw error
  })
  const programs = await fetch(`${a.url}/v1/programs`, { headers: { authorization: `Bearer ${NODE_ADMIN_SECRET}` } })
  const programId = (await programs.json()).data[0].id as string
  return {
    a,
    b,
    programId,
    stop: async () => {
      await Promise.all([stopNode(a), stopNode(b)])
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}
