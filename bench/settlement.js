// `npm run bench -- settlement [--seconds=3] [--concurrency=1,8,32]`
//
// The settlement account's row alone (docs/ledger.md#settlement-slots): external-rail postings of
// ONE program, each client posting from a wallet of its own to the program's settlement account
// with `issuing_post_transfers` directly over node-postgres (no HTTP), so the figure is what the
// database does with the settlement balance, not the Node side of a request. Setup goes through
// the platform (migrations, program, wallets). Each posting is the posting record of
// packages/store-pg/src/PostingRecord.ts (issue 44; an older checkout sends its own shape).
import { Access } from "@issuing/core"
import { createIssuing, storeFor } from "@issuing/http"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as os from "node:os"
import { benchPool, createDatabase, startPostgres } from "./support/postgres.js"
import { option } from "./support/common.js"

const posting = (programId, wallet, settlement) => {
  const now = new Date().toISOString()
  const id = crypto.randomUUID()
  return {
    program_id: programId,
    source: wallet,
    target: settlement,
    check_funds: false,
    amount: 1,
    currency: "USD",
    now,
    active_card: null,
    transaction_write: "insert",
    transaction_id: `txn_${id}`,
    transaction_status: "SETTLED",
    transaction_created_at: now,
    card_id: null,
    mcc: null,
    merchant_name: null,
    transfer_id: `tr_${id}`,
    rail: "fednow_instant",
    transfer_status: "SETTLED",
    description: null,
    metadata: "{}",
    book_transfer_id: `bt_${id}`,
    entries: [
      { account: wallet, book: "principal", entry_type: "DEBIT", amount: 1 },
      { account: wallet, book: "cash", entry_type: "CREDIT", amount: 1 },
      { account: settlement, book: "cash", entry_type: "DEBIT", amount: 1 },
      { account: settlement, book: "principal", entry_type: "CREDIT", amount: 1 }
    ],
    deltas: [
      { account: wallet, book: "principal", debits: 1, credits: 0, pending: 0 },
      { account: wallet, book: "cash", debits: 0, credits: 1, pending: 0 },
      { account: settlement, book: "cash", debits: 1, credits: 0, pending: 0 },
      { account: settlement, book: "principal", debits: 0, credits: 1, pending: 0 }
    ],
    events: [],
    balance_events: []
  }
}

const measure = async (url, seconds, concurrency) => {
  const instance = await createIssuing({
    store: storeFor({ kind: "postgres", url }),
    vaultKeys: [crypto.randomBytes(32)],
    background: false,
    log: null,
    settings: { baseUrl: "http://127.0.0.1:1" }
  })
  const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("settlement")))
  const call = async (method, route, body) => {
    const response = await instance.handler(
      new Request(`http://127.0.0.1:1${route}`, {
        method,
        headers: { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
    )
    return response.json()
  }
  const wallets = []
  for (let i = 0; i < concurrency; i++) {
    const wallet = await call("POST", "/v1/wallets", { holder: { name: `Holder ${i}` } })
    await call("POST", "/v1/transfers", {
      payment_rail: "fednow_instant",
      amount: 1_000,
      currency: "USD",
      to_financial_account_id: wallet.financial_account_id
    })
    wallets.push(wallet.financial_account_id)
  }
  const settlement = (await call("GET", "/v1/financial-accounts?kind=settlement&currency=USD")).data[0].id
  await instance.dispose()
  const pool = benchPool(url, concurrency)
  let count = 0
  const run = async (wallet, until, counted) => {
    const client = await pool.connect()
    try {
      while (performance.now() < until) {
        const [row] = (
          await client.query("SELECT posted FROM issuing_post_transfers($1::jsonb, NULL)", [
            JSON.stringify([posting(org.program_id, wallet, settlement)])
          ])
        ).rows
        if (row.posted !== true) throw new Error("a posting was refused")
        if (counted) count += 1
      }
    } finally {
      client.release()
    }
  }
  await Promise.all(wallets.map((w) => run(w, performance.now() + 500, false)))
  const began = performance.now()
  await Promise.all(wallets.map((w) => run(w, began + seconds * 1000, true)))
  const rate = count / ((performance.now() - began) / 1000)
  await pool.end()
  return rate
}

export async function run(args) {
  const seconds = Number(option(args, "seconds", "3"))
  const concurrencies = option(args, "concurrency", "1,8,32").split(",").map(Number)
  console.log(`settlement bench: ${seconds}s per line, load ${os.loadavg()[0].toFixed(1)}`)
  const server = await startPostgres()
  try {
    for (const concurrency of concurrencies) {
      const url = await createDatabase(server.adminUrl, `issuing_bench_settlement_${process.pid}_${concurrency}`)
      const rate = await measure(url, seconds, concurrency)
      console.log(`postgres  c=${String(concurrency).padEnd(3)} ${rate.toFixed(0).padStart(6)} settlement postings/s`)
    }
  } finally {
    await server.stop()
  }
}
