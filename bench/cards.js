// `npm run bench -- cards [--seconds=3] [--concurrency=16] [--pg-url=postgres://…]`
//
// Card operations per second over HTTP against a fresh SQLite file (or the PostgreSQL database
// named by --pg-url): issuance (number draw + uniqueness check + two AES-GCM seals + event),
// reveal (audit record + two decryptions), embed session creation, embed document views, and
// simulated authorizations (card lock, spend window sum, ledger posting). p50/p99 latency each.
import { Access } from "@issuing/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { option, percentile, requester } from "./support/common.js"
import { benchServer } from "./support/server.js"

export async function run(args) {
  const seconds = Number(option(args, "seconds", "3"))
  const concurrency = Number(option(args, "concurrency", "16"))
  const pgUrl = option(args, "pg-url", undefined)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-cards-"))
  const target = pgUrl ? { kind: "postgres", url: pgUrl } : { kind: "sqlite", filename: path.join(dir, "issuing.db") }
  const { server, baseUrl, instance } = await benchServer(target)
  const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("bench")))
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  const authorized = { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id }
  const send = requester(baseUrl, agent)
  const call = (method, route, body, auth = true) => send(method, route, body, auth ? authorized : {})
  const json = async (method, route, body) => JSON.parse((await call(method, route, body)).text)

  const wallet = await json("POST", "/v1/wallets", { holder: { name: "Bench" } })
  await json("POST", "/v1/transfers", {
    paymentRail: "fednow_instant",
    amount: 1e12,
    currency: "USD",
    to_financial_account_id: wallet.financial_account_id
  })
  const cards = []
  for (let i = 0; i < 32; i++)
    cards.push(
      await json("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL", spendingPeriod: { interval: "DAILY", amount: 1e11 } })
    )
  const session = await json("POST", `/v1/cards/${cards[0].id}/embed-sessions`)
  const pick = () => cards[Math.floor(Math.random() * cards.length)].id

  const phases = [
    ["issue", () => call("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })],
    ["reveal", () => call("POST", `/v1/cards/${pick()}/reveal`)],
    ["embed session", () => call("POST", `/v1/cards/${pick()}/embed-sessions`)],
    ["embed document", () => call("GET", `/v1/cards/embed?session_token=${session.session_token}`, undefined, false)],
    ["authorization", () => call("POST", "/v1/simulate/authorizations", { card_id: pick(), amount: 100, mcc: "5411" })]
  ]
  console.log(`cards bench on ${target.kind}, ${seconds}s per operation, concurrency ${concurrency}`)
  for (const [name, operation] of phases) {
    const latencies = []
    let failed = 0
    const deadline = performance.now() + seconds * 1000
    const loop = async () => {
      while (performance.now() < deadline) {
        const started = performance.now()
        const response = await operation()
        latencies.push(performance.now() - started)
        if (response.status !== 200) failed += 1
      }
    }
    const began = performance.now()
    await Promise.all(Array.from({ length: concurrency }, loop))
    const elapsed = (performance.now() - began) / 1000
    latencies.sort((a, b) => a - b)
    console.log(
      `${name.padEnd(15)} ${(latencies.length / elapsed).toFixed(0).padStart(6)} ops/s  p50 ${percentile(latencies, 0.5).toFixed(1)} ms  p99 ${percentile(latencies, 0.99).toFixed(1)} ms${failed ? `  (${failed} non-200)` : ""}`
    )
  }
  agent.destroy()
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await instance.dispose()
  fs.rmSync(dir, { recursive: true, force: true })
}
