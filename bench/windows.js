// `npm run bench -- windows [--rows=1000,1000000] [--store=sqlite,postgres] [--days=30] [--samples=15] [--against=DIR]`
//
// A time window's page 1 with its total_count over a long history (docs/decisions.md "Time filters
// and total_count"; the bound asked: page 1 of any list, any filter, at 1,000,000 rows within 2× of
// its time at 1,000). For each store and each `--rows`, a fresh database holds one program's events:
// a few written through the API, then `rows` synthetic ones inserted directly by SQL (the stores'
// triggers count them as they count any writer's rows), copies of those real events (their types
// and stored data) with `created_at` spread evenly over the last `--days` days (a history of
// months, which the volume bench's growth through the API, minutes long, cannot make). Then
// `GET /v1/events` page 1 (page_size 100) with its total_count, the median of `--samples` sequential
// reads after one unrecorded, for the windows: the whole history, its middle half, the middle half
// of one type, the last day, the last hour.
//
// `--against=DIR`: a checkout of an earlier release (built, e.g. /work/base) is served too, over the
// SAME database (an older process beside a newer one, as in a rolling restart: its migrations are
// all applied, it reads the plain counts as before), and each sample reads from both in turn, so
// both columns are of one time window and one set of rows. The load average is printed per store.
import { Access } from "@issuing/core"
import * as httpPackage from "@issuing/http"
import Database from "better-sqlite3"
import { Effect } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { benchDatabase, option, table } from "./support/common.js"
import { withPgClient } from "./support/postgres.js"
import { benchServer } from "./support/server.js"

const DAY_MS = 86_400_000

const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" ")

/** Serves an instance of `createIssuing` (this checkout's or another's) over `target` on a loopback port. */
const serve = async (createIssuing, storeFor, target) => {
  // Keep-alive longer than the history's insert, so the first read after it does not meet a socket the server closed.
  const { server, baseUrl, instance } = await benchServer(target, { keepAliveTimeout: 3_600_000 }, { createIssuing, storeFor })
  return {
    baseUrl,
    instance,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      await instance.dispose()
    }
  }
}

/** Inserts `rows` copies of the program's events, created_at evenly over [from, from + spanMs). */
const insertHistory = async (target, programId, rows, from, spanMs) => {
  const step = spanMs / rows
  if (target.kind === "sqlite") {
    const db = new Database(target.filename)
    db.pragma("busy_timeout = 10000")
    const seeds = db.prepare("SELECT id FROM issuing_events WHERE program_id = ? ORDER BY id").all(programId)
    const insert = db.prepare(`WITH RECURSIVE g(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM g WHERE i < ?)
      INSERT INTO issuing_events (id, program_id, type, created_at, data)
      SELECT 'evt_h' || printf('%08d', g.i), e.program_id, e.type,
             strftime('%Y-%m-%dT%H:%M:%fZ', (? + g.i * ?) / 1000.0, 'unixepoch'), e.data
      FROM g JOIN issuing_events e ON e.id = CASE g.i % ${seeds.length} ${seeds.map((_, i) => `WHEN ${i} THEN ?`).join(" ")} END`)
    for (let start = 0; start < rows; start += 100_000) {
      db.transaction(() => insert.run(start, Math.min(rows, start + 100_000) - 1, from, step, ...seeds.map((s) => s.id)))()
    }
    db.close()
    return
  }
  await withPgClient(target.url, async (client) => {
    const { rows: seeds } = await client.query("SELECT id FROM issuing_events WHERE program_id = $1 ORDER BY id", [programId])
    for (let start = 0; start < rows; start += 100_000) {
      await client.query(
        `INSERT INTO issuing_events (id, program_id, type, created_at, data)
         SELECT 'evt_h' || lpad(g::text, 8, '0'), e.program_id, e.type,
                to_timestamp(($3::float8 + g * $4::float8) / 1000.0), e.data
         FROM generate_series($1::int, $2::int) g
         JOIN LATERAL (SELECT * FROM issuing_events x WHERE x.id = ($5::text[])[1 + g % array_length($5::text[], 1)]) e ON true`,
        [start, Math.min(rows, start + 100_000) - 1, from, step, seeds.map((s) => s.id)]
      )
    }
    await client.query("ANALYZE")
  })
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const measureStore = async (kind, rows, { days, samples, against }) => {
  const database = await benchDatabase(kind, "issuing_bench_windows")
  const ours = await serve(httpPackage.createIssuing, httpPackage.storeFor, database.target)
  try {
    const org = await ours.instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("Bench")))
    const headers = { authorization: `Bearer ${org.api_key}`, "x-program-id": org.program_id, "content-type": "application/json" }
    // Real events to copy: a wallet's and its account's (two types).
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${ours.baseUrl}/v1/wallets`, {
        method: "POST",
        headers,
        body: JSON.stringify({ holder: { name: `Holder ${i}`, email: `h${i}@example.com` } })
      })
      if (response.status !== 200) throw new Error(`wallet: ${response.status} ${await response.text()}`)
    }
    const end = Date.now() - 60_000
    const from = end - days * DAY_MS
    const began = performance.now()
    await insertHistory(database.target, org.program_id, rows, from, end - from)
    const insertSeconds = (performance.now() - began) / 1000
    const types = await (await fetch(`${ours.baseUrl}/v1/events?page_size=100`, { headers })).json()
    const type = types.data.at(-1).type
    const iso = (ms) => encodeURIComponent(new Date(ms).toISOString())
    const quarter = (end - from) / 4
    const windows = [
      ["whole history", `created[gte]=${iso(from)}`],
      ["middle half", `created[gte]=${iso(from + quarter)}&created[lt]=${iso(end - quarter)}`],
      ["middle half, one type", `type=${type}&created[gte]=${iso(from + quarter)}&created[lt]=${iso(end - quarter)}`],
      ["last day", `created[gte]=${iso(end - DAY_MS)}`],
      ["last hour", `created[gte]=${iso(end - DAY_MS / 24)}`]
    ]
    const servers = [["new", ours]]
    if (against !== undefined) {
      const earlier = await import(pathToFileURL(path.join(against, "packages/http/dist/index.js")).href)
      servers.unshift(["old", await serve(earlier.createIssuing, earlier.storeFor, database.target)])
    }
    const figures = []
    for (const [name, query] of windows) {
      const times = new Map(servers.map(([label]) => [label, []]))
      const totals = new Map()
      for (let sample = 0; sample <= samples; sample++) {
        for (const [label, served] of servers) {
          const started = performance.now()
          const response = await fetch(`${served.baseUrl}/v1/events?page_size=100&${query}`, { headers })
          const body = await response.json()
          const ms = performance.now() - started
          if (response.status !== 200) throw new Error(`${label} ${name}: ${response.status} ${JSON.stringify(body)}`)
          if (sample > 0) times.get(label).push(ms)
          totals.set(label, body.total_count)
        }
      }
      const counted = [...new Set(totals.values())]
      if (counted.length !== 1) throw new Error(`${name}: the servers counted ${JSON.stringify([...totals])}`)
      figures.push([name, counted[0], ...servers.map(([label]) => median(times.get(label)).toFixed(1))])
    }
    for (const [label, served] of servers) if (label !== "new") await served.close()
    return { figures, labels: servers.map(([label]) => label), insertSeconds, load: loadAverage() }
  } finally {
    await ours.close()
    await database.drop()
  }
}

export const run = async (args) => {
  const stores = option(args, "store", "sqlite,postgres").split(",")
  const sizes = option(args, "rows", "1000,1000000").split(",").map(Number)
  const days = Number(option(args, "days", "30"))
  const samples = Number(option(args, "samples", "15"))
  const against = option(args, "against", undefined)
  for (const kind of stores) {
    for (const rows of sizes) {
      const { figures, labels, insertSeconds, load } = await measureStore(kind, rows, { days, samples, against })
      console.log(
        `\n${kind}, ${rows.toLocaleString("en-US")} synthetic events over ${days} days (inserted in ${insertSeconds.toFixed(0)} s); load ${load}`
      )
      console.log(table([["window", "total_count", ...labels.map((label) => `${label} ms`)], ...figures]))
    }
  }
}
