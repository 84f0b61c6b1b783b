// The loopback receiver of `npm run bench -- webhooks`, in a process of its own: answers every POST
// 200 and notes, per delivery, the event id and the arrival time (Date.now(), the clock the
// platform's created_at is taken on) while a latency phase asks for it: `reset` with
// `{ arrivals: true }`. Otherwise it only counts, doing for the platform's deliveries exactly what it
// does for the bare client's requests, so the deliveries ÷ bare ratio compares the senders, not a
// JSON parse the receiver did for one side only. Over the IPC channel: `reset`, `waitFor` (answered once that
// many deliveries arrived, or with `timedOut` after `timeoutMs`), and `phaseStart` / `phaseStop`
// (this process's event loop delay and CPU meanwhile). Each request `{ id, op, … }` is answered
// `{ id, result }`.
import * as http from "node:http"
import { monitorEventLoopDelay } from "node:perf_hooks"

let count = 0
let arrivals = []
let recordArrivals = false
let waiter
const server = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    count += 1
    if (recordArrivals) {
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      arrivals.push([event.id, Date.now()])
    }
    response.writeHead(200, { "content-type": "text/plain", "content-length": 2 })
    response.end("ok")
    if (waiter !== undefined && count >= waiter.n) waiter.done()
  })
})

let phase
const ops = {
  reset: ({ arrivals: record = false }) => {
    count = 0
    arrivals = []
    recordArrivals = record
  },
  waitFor: ({ n, timeoutMs }) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiter = undefined
        resolve({ count, arrivals, timedOut: true })
      }, timeoutMs)
      waiter = {
        n,
        done: () => {
          clearTimeout(timer)
          waiter = undefined
          resolve({ count, arrivals })
        }
      }
      if (count >= n) waiter.done()
    }),
  phaseStart: () => {
    const loop = monitorEventLoopDelay({ resolution: 5 })
    loop.enable()
    phase = { loop, cpu: process.cpuUsage() }
  },
  phaseStop: () => {
    phase.loop.disable()
    const cpu = process.cpuUsage(phase.cpu)
    return { loopP99Ms: phase.loop.percentile(99) / 1e6, loopMaxMs: phase.loop.max / 1e6, cpuMs: (cpu.user + cpu.system) / 1000 }
  }
}

process.on("message", async ({ id, op, ...args }) => {
  process.send({ id, result: await ops[op](args) })
})
server.listen(0, "127.0.0.1", () => process.send({ ready: true, port: server.address().port }))
