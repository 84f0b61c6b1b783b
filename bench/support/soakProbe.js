// Preloaded into the `issuing serve` process of bench/soak.js (`node --import <this> …/issuing.js
// serve`): the server itself exposes nothing new. On SIGUSR2 it writes one JSON sample to the file
// named by ISSUING_SOAK_PROBE_FILE — event-loop delay since the previous sample (perf_hooks'
// monitorEventLoopDelay, a 10 ms resolution timer: lightweight), V8 heap and external memory, and
// the process's active resources by type (process.getActiveResourcesInfo: sockets, timers, file
// requests…) — then starts a new delay window. The write is synchronous and small; a late answer is
// itself a sign of a blocked event loop.
import * as fs from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"

const file = process.env.ISSUING_SOAK_PROBE_FILE
if (file) {
  const RESOLUTION_MS = 10
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  delay.enable()
  process.on("SIGUSR2", () => {
    const memory = process.memoryUsage()
    const resources = {}
    for (const name of process.getActiveResourcesInfo()) resources[name] = (resources[name] ?? 0) + 1
    const sample = {
      atMs: Date.now(),
      // monitorEventLoopDelay reports nanoseconds, its timer's interval included: the lag is the rest.
      lagP50Ms: Math.max(0, delay.percentile(50) / 1e6 - RESOLUTION_MS),
      lagP99Ms: Math.max(0, delay.percentile(99) / 1e6 - RESOLUTION_MS),
      lagMaxMs: Math.max(0, delay.max / 1e6 - RESOLUTION_MS),
      heapUsed: memory.heapUsed,
      heapTotal: memory.heapTotal,
      external: memory.external,
      arrayBuffers: memory.arrayBuffers,
      resources
    }
    delay.reset()
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(sample))
    fs.renameSync(`${file}.tmp`, file)
  })
}
