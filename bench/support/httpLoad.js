// A keep-alive HTTP load generator, run as its own process so that it does not share the
// server's CPU: `node bench/support/httpLoad.js '<json options>'` prints one JSON line
// {ok, errors, elapsedMs, perSecond, p50Ms, p99Ms}. Options: url, headers, concurrency, durationMs, warmupMs.
import * as http from "node:http"

const options = JSON.parse(process.argv[2])

const load = async (durationMs, record) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency })
  const latencies = []
  let errors = 0
  const deadline = performance.now() + durationMs
  const one = () =>
    new Promise((resolve) => {
      const started = performance.now()
      const request = http.get(options.url, { agent, headers: options.headers }, (response) => {
        response.resume()
        response.on("end", () => {
          if (response.statusCode === 200) latencies.push(performance.now() - started)
          else errors += 1
          resolve()
        })
      })
      request.on("error", () => {
        errors += 1
        resolve()
      })
    })
  const began = performance.now()
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < deadline) await one()
    })
  )
  const elapsedMs = performance.now() - began
  agent.destroy()
  if (!record) return
  latencies.sort((a, b) => a - b)
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0
  process.stdout.write(
    `${JSON.stringify({
      ok: latencies.length,
      errors,
      elapsedMs,
      perSecond: (latencies.length / elapsedMs) * 1000,
      p50Ms: at(50),
      p99Ms: at(99)
    })}\n`
  )
}

await load(options.warmupMs ?? 1000, false)
process.stdout.write("measuring\n")
await load(options.durationMs, true)
