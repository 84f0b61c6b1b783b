// `npm run bench -- console [--transfers=100000] [--store=sqlite,postgres] [--samples=7] [--in-flight=4]`
//
// Whether the console (docs/console.md) stays responsive as a program grows: each view's API
// requests, made as the console makes them (in sequence where it waits for an answer, together
// where it asks at once), timed end to end at 1,000 transfers and at `--transfers`. One program is
// grown through `POST /v1/transfers/batch` (batches of 1,000 book transfers between 16 wallets, half
// of them with one busy wallet on a side, so its book-transfer list grows with the program; each
// transfer writes a transaction, a transfer, a book transfer, 4 entries and 3 events). Figures are
// medians of `--samples` runs of each view after one unrecorded run; the machine may be shared, so
// the load average is printed with them.
import { Access } from "@issuing/core"
import { createIssuing, storeFor } from "@issuing/http"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import * as http from "node:http"
import * as os from "node:os"
import { benchDatabase, option, requester, table } from "./support/common.js"

const WALLETS = 16
const BATCH = 1000

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** The console's views as the requests each makes (`get` and `all` are the page's own waits). */
const VIEWS = {
  "sign-in (programs)": ({ get }) => get("/v1/programs?page_size=100&order_by=created_at&ascending=true", true),
  "wallets (page of 20 + their accounts)": async ({ get, all }) => {
    const page = await get("/v1/wallets?page_size=20")
    await all(page.data.map((wallet) => () => get(`/v1/financial-accounts/${wallet.financial_account_id}`)))
  },
  "busy wallet (chart of 100, cards, postings)": async ({ get, all, busy }) => {
    const wallet = await get(`/v1/wallets/${busy.wallet}`)
    const account = await get(`/v1/financial-accounts/${wallet.financial_account_id}`)
    await all([
      () => get(`/v1/financial-accounts/${account.id}/book-transfers?page_size=100`),
      () => get(`/v1/cards?page_size=20&wallet_id=${wallet.id}`),
      () => get(`/v1/financial-accounts/${account.id}/book-transfers?page_size=10`)
    ])
  },
  "chart: 10 × earlier postings": async ({ get, busy }) => {
    let cursor
    for (let step = 0; step < 10; step++) {
      const page = await get(
        `/v1/financial-accounts/${busy.account}/book-transfers?page_size=100${cursor ? `&starting_after=${cursor}` : ""}`
      )
      cursor = page.data.at(-1)?.id
    }
  },
  "transactions, next page ×5": async ({ get }) => {
    let cursor
    for (let step = 0; step < 5; step++) {
      const page = await get(`/v1/transactions?page_size=20${cursor ? `&starting_after=${cursor}` : ""}`)
      cursor = page.data.at(-1)?.id
    }
  },
  "transaction (+ its book transfers)": async ({ get, busy }) => {
    await get(`/v1/transactions/${busy.transaction}`)
    await get(`/v1/transactions/${busy.transaction}/book-transfers?page_size=10`)
  },
  "events (page of 20)": ({ get }) => get("/v1/events?page_size=20&type=transfer.created"),
  "events by time (one click: 10 pages of 100)": async ({ get }) => {
    let cursor
    for (let step = 0; step < 10; step++) {
      const page = await get(`/v1/events?page_size=100&type=transfer.created${cursor ? `&starting_after=${cursor}` : ""}`)
      cursor = page.data.at(-1)?.id
    }
  }
}

const runStore = async (kind, checkpoints, { samples, inFlight }) => {
  const database = await benchDatabase(kind, "issuing_bench_console")
  const server = http.createServer()
  server.keepAliveTimeout = 60_000
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  const baseUrl = `http://127.0.0.1:${server.address().port}`
  const instance = await createIssuing({
    store: storeFor(database.target),
    vaultKeys: [crypto.randomBytes(32)],
    background: false,
    log: null,
    settings: { baseUrl, rateLimitPerSecond: 1_000_000_000, rateLimitBurst: 1_000_000_000 }
  })
  server.on("request", instance.listener)
  const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(inFlight, 20) })
  const results = []
  try {
    const org = await instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("console")))
    const request = requester(baseUrl, agent)
    const programHeaders = { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id }
    const organizationHeaders = { authorization: `Bearer ${org.api_key}` }
    /** The answer's JSON; anything but 200 fails the bench. */
    const call = async (method, route, body, organization = false) => {
      const { status, text } = await request(method, route, body, organization ? organizationHeaders : programHeaders)
      if (status !== 200) throw new Error(`${method} ${route}: ${status} ${text}`)
      return JSON.parse(text)
    }
    const get = (route, organization) => call("GET", route, undefined, organization)
    const all = (thunks) => Promise.all(thunks.map((thunk) => thunk()))
    const wallets = []
    for (let index = 0; index < WALLETS; index++) {
      const wallet = await call("POST", "/v1/wallets", { holder: { name: `Holder ${index}` } })
      await call("POST", "/v1/transfers", {
        paymentRail: "fednow_instant",
        amount: 1_000_000_000_000,
        currency: "USD",
        to_financial_account_id: wallet.financial_account_id
      })
      wallets.push(wallet)
    }
    const accounts = wallets.map((wallet) => wallet.financial_account_id)
    /** A book transfer: half with the busy wallet (0) on a side, the others between two of the rest. */
    const item = () => {
      const a = 1 + Math.floor(Math.random() * (WALLETS - 1))
      let b = 1 + Math.floor(Math.random() * (WALLETS - 2))
      if (b >= a) b += 1
      const [from, to] = Math.random() < 0.5 ? (Math.random() < 0.5 ? [0, a] : [a, 0]) : [a, b]
      return {
        paymentRail: "book",
        amount: 1 + Math.floor(Math.random() * 100),
        currency: "USD",
        from_financial_account_id: accounts[from],
        to_financial_account_id: accounts[to]
      }
    }
    let posted = WALLETS
    const grow = async (target) => {
      const started = performance.now()
      let lastPrint = started
      const lane = async () => {
        while (posted < target) {
          const size = Math.min(BATCH, target - posted)
          posted += size
          await call("POST", "/v1/transfers/batch", { transfers: Array.from({ length: size }, item) })
          if (performance.now() - lastPrint > 10_000) {
            lastPrint = performance.now()
            console.log(
              `  ${kind}: ${posted.toLocaleString("en-US")} transfers (${Math.round(posted / ((lastPrint - started) / 1000)).toLocaleString("en-US")}/s)`
            )
          }
        }
      }
      await Promise.all(Array.from({ length: inFlight }, lane))
    }
    for (const checkpoint of checkpoints) {
      await grow(checkpoint)
      const busyTransfers = await get(`/v1/financial-accounts/${accounts[0]}/book-transfers?page_size=1`)
      const busy = { wallet: wallets[0].id, account: accounts[0], transaction: busyTransfers.data[0].transaction_id }
      const total = (await get("/v1/transfers?page_size=1")).total_count
      const row = { checkpoint: total, load: os.loadavg()[0].toFixed(1), views: {} }
      for (const [name, view] of Object.entries(VIEWS)) {
        await view({ get, all, busy })
        const times = []
        for (let sample = 0; sample < samples; sample++) {
          const started = performance.now()
          await view({ get, all, busy })
          times.push(performance.now() - started)
        }
        row.views[name] = median(times)
      }
      results.push(row)
      console.log(`  ${kind} at ${total.toLocaleString("en-US")} transfers (load ${row.load}) measured`)
    }
  } finally {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await instance.dispose()
    await database.drop()
  }
  return results
}

export const run = async (args) => {
  const transfers = Number(option(args, "transfers", "100000"))
  const stores = option(args, "store", "sqlite,postgres").split(",")
  const samples = Number(option(args, "samples", "7"))
  const inFlight = Number(option(args, "in-flight", "4"))
  const checkpoints = [1000, transfers].filter((value, index, all) => all.indexOf(value) === index)
  console.log(
    `console: each view's requests, median of ${samples}, at ${checkpoints.map((c) => c.toLocaleString("en-US")).join(" and ")} transfers`
  )
  for (const kind of stores) {
    const results = await runStore(kind, checkpoints, { samples, inFlight })
    const first = results[0]
    const last = results.at(-1)
    console.log(
      `\n${kind}: ms per view at ${results.map((r) => `${r.checkpoint.toLocaleString("en-US")} transfers (load ${r.load})`).join(" → ")}`
    )
    console.log(
      table([
        ["view", ...results.map((r) => `${r.checkpoint.toLocaleString("en-US")}`), "ratio"],
        ...Object.keys(VIEWS).map((name) => [
          name,
          ...results.map((r) => r.views[name].toFixed(1)),
          (last.views[name] / first.views[name]).toFixed(2)
        ])
      ])
    )
  }
}
