// `npm run bench -- disputes [--requests=60] [--rounds=3] [--stores=sqlite,postgres]`
//
// What a dispute costs next to the write it is built on (docs/disputes.md, docs/decisions.md): the
// time of one `POST /v1/disputes` (the transaction locked, its claim, the provisional credit through
// the one posting, the dispute row, its counts and five events) beside one book transfer
// `POST /v1/transfers` (one posting), one client, in-process through the platform's handler (no
// socket), alternated in rounds in the same run so that the machine's load weighs on both alike.
// Each dispute is on a card transaction of its own, settled by a single-message authorization
// before the timed rounds.
import { Access } from "@issuing/core"
import { createIssuing, storeFor } from "@issuing/http"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as os from "node:os"
import { benchDatabase, option, percentile } from "./support/common.js"

const measure = async (kind, requests, rounds) => {
  const database = await benchDatabase(kind, "issuing_bench_disputes")
  const instance = await createIssuing({
    store: storeFor(database.target),
    vaultKeys: [crypto.randomBytes(32)],
    background: false,
    log: null,
    settings: { baseUrl: "http://127.0.0.1:1" }
  })
  try {
    const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("disputes")))
    const call = async (method, route, body) => {
      const response = await instance.handler(
        new Request(`http://127.0.0.1:1${route}`, {
          method,
          headers: { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body)
        })
      )
      const json = await response.json()
      if (response.status !== 200) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`)
      return json
    }
    const wallet = await call("POST", "/v1/wallets", { holder: { name: "Holder" } })
    const other = await call("POST", "/v1/wallets", { holder: { name: "Other" } })
    await call("POST", "/v1/transfers", {
      payment_rail: "fednow_instant",
      amount: 100_000_000,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    const card = await call("POST", "/v1/cards", { wallet_id: wallet.id, type: "VIRTUAL" })
    const charges = []
    for (let i = 0; i < requests * rounds + 5; i++) {
      const charge = await call("POST", "/v1/simulate/authorizations", {
        card_id: card.id,
        amount: 500,
        mcc: "5411",
        kind: "FINANCIAL_AUTHORIZATION"
      })
      charges.push(charge.id)
    }
    const timed = async (send) => {
      const ms = []
      for (let i = 0; i < requests; i++) {
        const began = performance.now()
        await send()
        ms.push(performance.now() - began)
      }
      return ms
    }
    const dispute = () => call("POST", "/v1/disputes", { transaction_id: charges.pop(), reason: "FRAUD" })
    const transfer = () =>
      call("POST", "/v1/transfers", {
        payment_rail: "book",
        amount: 1,
        currency: "USD",
        from_financial_account_id: wallet.financial_account_id,
        to_financial_account_id: other.financial_account_id
      })
    // Warm-up: the first of each pays for caches and prepared statements.
    for (let i = 0; i < 5; i++) {
      await dispute()
      await transfer()
    }
    const disputes = []
    const transfers = []
    for (let round = 0; round < rounds; round++) {
      const first = round % 2 === 0
      if (first) disputes.push(...(await timed(dispute)))
      transfers.push(...(await timed(transfer)))
      if (!first) disputes.push(...(await timed(dispute)))
    }
    return { disputes: disputes.sort((a, b) => a - b), transfers: transfers.sort((a, b) => a - b) }
  } finally {
    await instance.dispose()
    await database.drop()
  }
}

export async function run(args) {
  const requests = Number(option(args, "requests", "60"))
  const rounds = Number(option(args, "rounds", "3"))
  const stores = option(args, "stores", "sqlite,postgres").split(",")
  console.log(`disputes bench: ${rounds} alternated rounds of ${requests} requests each, one client, load ${os.loadavg()[0].toFixed(1)}`)
  for (const kind of stores) {
    const { disputes, transfers } = await measure(kind, requests, rounds)
    const line = (name, ms) => `${name} p50 ${percentile(ms, 0.5).toFixed(2)} ms, p99 ${percentile(ms, 0.99).toFixed(2)} ms`
    console.log(
      `${kind.padEnd(8)} ${line("dispute", disputes)} | ${line("book transfer", transfers)} | p50 ratio ${(percentile(disputes, 0.5) / percentile(transfers, 0.5)).toFixed(2)} (load ${os.loadavg()[0].toFixed(1)})`
    )
  }
}
