// Preloaded into the `issuing serve` process of bench/soak.js (`node --import <this> …/issuing.js
// serve`): the server itself exposes nothing new. On SIGUSR2 it writes one JSON sample to the file
// named by ISSUING_SOAK_PROBE_FILE — event-loop delay since the previous sample (perf_hooks'
// monitorEventLoopDelay, a 10 ms resolution timer: lightweight), V8 heap — in use now, and the
// lowest in use right after a full collection (what is alive) — and external memory, and
// the process's active resources by type (process.getActiveResourcesInfo: sockets, timers, file
// requests…) — then starts a new delay window. The write is synchronous and small; a late answer is
// itself a sign of a blocked event loop.
import * as fs from "node:fs"
import { constants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import * as v8 from "node:v8"

const file = process.env.ISSUING_SOAK_PROBE_FILE
if (file) {
  const RESOLUTION_MS = 10
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  delay.enable()
  // The heap still used right after each full (mark-sweep) collection: what is alive. Its lowest
  // value in a window tells a leak (it climbs) from a heap that only grew its capacity.
  let liveHeap = 0
  let lowestLiveHeap = Number.POSITIVE_INFINITY
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        liveHeap = v8.getHeapStatistics().used_heap_size
        lowestLiveHeap = Math.min(lowestLiveHeap, liveHeap)
      }
    }
  }).observe({ entryTypes: ["gc"] })
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
      // No full collection in the window: the last one's figure.
      liveHeap: Number.isFinite(lowestLiveHeap) ? lowestLiveHeap : liveHeap,
      heapTotal: memory.heapTotal,
      external: memory.external,
      arrayBuffers: memory.arrayBuffers,
      resources
    }
    delay.reset()
    lowestLiveHeap = Number.POSITIVE_INFINITY
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(sample))
    fs.renameSync(`${file}.tmp`, file)
  })
}

// `npm run bench -- soak --leak=js|native` checks that the memory rule catches a leak: the probe
// then retains about 200 KB a second (12 MB/min), as JavaScript objects or as native buffers.
const leak = process.env.ISSUING_SOAK_PROBE_LEAK
if (file && (leak === "js" || leak === "native")) {
  const kept = []
  setInterval(() => {
    kept.push(
      leak === "js" ? Array.from({ length: 2500 }, (_, i) => ({ i, text: `leak-${i}-${Date.now()}` })) : Buffer.alloc(200 * 1024, 1)
    )
  }, 1000).unref()
}
