import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanEnv, freePort, ROOT, start } from "../packaging/support.js"
import { spawnCli, waitForOutput } from "../support/cli.js"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { TEST_VAULT_KEY } from "../support/platform.js"

// docs/getting-started.md kept honest, on both stores: its commands run as written, in order, in
// one bash against `issuing serve`, each answering 2xx (curl --fail-with-body); the outputs it shows
// are what they print (every number, flag and word of them, ids and times aside); the receiver
// verifies the deliveries it shows; and every route it calls is one of /openapi.json's.
//
// The guide's conventions this relies on: ```sh blocks are the commands of the second terminal;
// ```shell blocks are what the reader types elsewhere or with their own values: the server start
// and the `export` of the reader's key (both done here: the test starts the server and sets
// ISSUING, KEY and PROGRAM), and the receiver's start (run here in the background). The output a
// command prints is the ```json or ```text block after it.

const GUIDE = path.join(ROOT, "docs/getting-started.md")

interface Block {
  readonly index: number
  readonly lang: string
  readonly code: string
}

const guideBlocks = (): ReadonlyArray<Block> =>
  [...fs.readFileSync(GUIDE, "utf8").matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match, index) => ({
    index,
    lang: match[1]!,
    code: match[2]!
  }))

const isCommand = (block: Block) => block.lang === "sh" || block.lang === "shell"

/** The output block shown after a command block, if any (before the next command). */
const shownOutput = (blocks: ReadonlyArray<Block>, command: Block): Block | undefined => {
  const next = blocks.find((block) => block.index > command.index && (isCommand(block) || block.lang === "json" || block.lang === "text"))
  return next === undefined || isCommand(next) ? undefined : next
}

/** Ids, times and secrets differ on every run; so do a new card's last four digits and expiry. */
const VARYING_KEYS = new Set(["last_four", "exp_month", "exp_year"])
const VARYING_VALUE = /^"(?:[0-9a-f]{8}-[0-9a-f]{4}-|\d{4}-\d\d-\d\dT|whsec_|sk_)/

/** The `"key": value` pairs of a shown output whose values are scalars that do not vary, compacted as the API prints them. */
const fixedPairs = (shown: string): ReadonlyArray<string> =>
  [...shown.matchAll(/"(\w+)": ("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)(?=\s*[,}\n])/g)]
    .filter(([, key, value]) => !VARYING_KEYS.has(key!) && !VARYING_VALUE.test(value!))
    .map(([, key, value]) => `"${key}":${value}`)

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g

/** The (method, path) of every curl command: POST when it sends a body. */
const curlCalls = (blocks: ReadonlyArray<Block>) =>
  blocks
    .filter(isCommand)
    .flatMap((block) => block.code.replace(/\\\n/g, " ").split("\n"))
    .filter((line) => /^\s*curl /.test(line))
    .map((line) => ({ method: /\s-d\s/.test(line) ? "post" : "get", path: /\$ISSUING(\/[^\s"']*)/.exec(line)![1]! }))

/** The guide's text with the receiver on `port`: its 4000 may be taken on a test machine. */
const RECEIVER_PORT = /127\.0\.0\.1:4000|listen\(4000,/g
const withReceiverPort = (text: string, port: number) => text.replace(RECEIVER_PORT, (found) => found.replace("4000", String(port)))

/** The guide as one bash script: its commands in order, a marker before each, the receiver in the background. */
const tourScript = (blocks: ReadonlyArray<Block>, receiverPort: number): string => {
  const lines = ["set -euo pipefail", 'curl() { command curl --fail-with-body --show-error "$@"; }']
  let portMentions = 0
  for (const block of blocks.filter(isCommand)) {
    portMentions += block.code.match(RECEIVER_PORT)?.length ?? 0
    const code = withReceiverPort(block.code, receiverPort)
    if (code.includes("node receiver.mjs")) {
      lines.push(
        `(cd "$TOUR_ROOT" && ${code.trim()}) > "$TOUR_ROOT/receiver.log" 2>&1 &`,
        `for i in $(seq 300); do grep -q listening "$TOUR_ROOT/receiver.log" 2>/dev/null && break; sleep 0.1; done`
      )
      continue
    }
    lines.push(`echo "@@block ${block.index}"`)
    lines.push(...code.split("\n").filter((line) => !/^(npm (install|start)|export ISSUING=)/.test(line)))
    lines.push("echo")
  }
  // The subscription's URL, the receiver's listen call and its listening line.
  expect(portMentions).toBe(3)
  return `${lines.join("\n")}\n`
}

describe("docs/getting-started.md", () => {
  const blocks = guideBlocks()

  it("starts the server, exports the reader's key and starts the receiver in ```shell blocks, and has commands in ```sh", () => {
    const shell = blocks.filter((block) => block.lang === "shell").map((block) => block.code)
    expect(shell.some((code) => code.includes("npm start"))).toBe(true)
    expect(shell.some((code) => /^export ISSUING=\S+ KEY=\S+ PROGRAM=\S+$/m.test(code))).toBe(true)
    expect(shell.some((code) => code.includes("node receiver.mjs"))).toBe(true)
    const calls = curlCalls(blocks).map((call) => `${call.method} ${call.path}`)
    for (const step of ["post /v1/wallets", "post /v1/transfers", "post /v1/cards", "post /v1/simulate/authorizations"]) {
      expect(calls, step).toContain(step)
    }
    expect(calls).toContain("post /v1/simulate/transactions/$TRANSACTION/clearing")
  })

  describe.each(STORE_KINDS)("run as written against issuing serve on %s", (kind) => {
    let database: TestDatabase
    let root: string
    let serve: ReturnType<typeof spawnCli>
    let url: string
    let key: string
    let program: string
    beforeAll(async () => {
      database = await createTestDatabase(kind)
      // The reader's checkout: the guide's folders under it, and its node_modules (standardwebhooks).
      root = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-getting-started-"))
      fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(root, "node_modules"), "dir")
      serve = spawnCli(
        ["serve"],
        { ISSUING_DATABASE_URL: database.url, ISSUING_PORT: "0", ISSUING_VAULT_KEY: TEST_VAULT_KEY.toString("base64") },
        root
      )
      const output = await waitForOutput(serve, /listening on (\S+)/, 60_000)
      url = /listening on (\S+)/.exec(output)![1]!
      key = /Admin API key \(shown once, PAN reveal enabled\): (\S+)/.exec(output)![1]!
      program = /X-Program-ID: (\S+)/.exec(output)![1]!
    }, 90_000)
    afterAll(async () => {
      if (serve !== undefined && serve.exitCode === null) {
        const exited = new Promise((resolve) => serve.once("exit", resolve))
        serve.kill("SIGTERM")
        await exited
      }
      if (root !== undefined) fs.rmSync(root, { recursive: true, force: true })
      await database?.drop()
    })

    it("calls only routes of /openapi.json, with their methods", async () => {
      const document = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> }
      const routes = Object.entries(document.paths).map(([template, operations]) => ({
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
        methods: Object.keys(operations)
      }))
      for (const call of curlCalls(blocks)) {
        const concrete = call.path.replace(/\$\w+/g, "x")
        const route = routes.find((candidate) => candidate.pattern.test(concrete))
        expect(route, `${call.method} ${call.path}`).toBeDefined()
        expect(route!.methods, `${call.method} ${call.path}`).toContain(call.method)
      }
    })

    it("answers every command 2xx with the output the guide shows, and the receiver verifies the deliveries it shows", async () => {
      const receiverPort = await freePort()
      fs.writeFileSync(path.join(root, "tour.sh"), tourScript(blocks, receiverPort))
      const tour = start("bash", [path.join(root, "tour.sh")], {
        cwd: root,
        env: cleanEnv({ ISSUING: url, KEY: key, PROGRAM: program, TOUR_ROOT: root })
      })
      let stdout = ""
      tour.child.stdout!.on("data", (chunk) => (stdout += chunk))
      try {
        await tour.closed
        expect(tour.child.exitCode, `${stdout}\n${fs.readFileSync(path.join(root, "receiver.log"), "utf8")}`).toBe(0)

        // Each command's output holds every fixed value the guide shows after it.
        const printed = new Map<number, string>()
        for (const part of stdout.split(/^@@block /m).slice(1)) {
          const newline = part.indexOf("\n")
          printed.set(Number(part.slice(0, newline)), part.slice(newline + 1))
        }
        let compared = 0
        for (const command of blocks.filter((block) => block.lang === "sh")) {
          const shown = shownOutput(blocks, command)
          if (shown === undefined) continue
          const output = printed.get(command.index)!
          for (const pair of fixedPairs(withReceiverPort(shown.code, receiverPort)))
            expect(output, `block ${command.index}: ${pair}`).toContain(pair)
          compared += 1
        }
        expect(compared).toBeGreaterThanOrEqual(8)
        // A clearing above the authorization: the tip.
        const clearing = blocks.find((block) => block.code.includes("/clearing"))!
        const cleared = JSON.parse(printed.get(clearing.index)!.trim()) as { authorized_amount: number; settled_amount: number }
        expect(cleared.settled_amount).toBeGreaterThan(cleared.authorized_amount)

        // The receiver's lines, ids aside and in any order (deliveries run concurrently).
        const receiverShown = blocks.find((block) => block.lang === "text" && block.code.includes("verified "))!
        const expected = receiverShown.code
          .trim()
          .split("\n")
          .filter((line) => line.startsWith("verified "))
          .map((line) => line.replace(UUID, "<id>"))
        const log = path.join(root, "receiver.log")
        const received = async () => {
          for (let waitedMs = 0; waitedMs < 30_000; waitedMs += 100) {
            const lines = fs
              .readFileSync(log, "utf8")
              .split("\n")
              .filter((line) => /^(verified|refused)/.test(line))
            if (lines.length >= expected.length) return lines.map((line) => line.replace(UUID, "<id>"))
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
          throw new Error(`the receiver printed: ${fs.readFileSync(log, "utf8")}`)
        }
        expect((await received()).sort()).toEqual([...expected].sort())
      } finally {
        tour.kill() // the receiver, left running in the script's process group
      }
    }, 90_000)
  })
})
