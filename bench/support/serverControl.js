// The profiler's control of a served process (support/profiledServer.js, support/floorServer.js),
// over its IPC channel: `{ profile: "start" }` starts V8's CPU profiler and `{ profile: "stop", file }`
// writes the profile to `file`; `{ count: "start" }` and `{ count: "stop" }` count what the process
// does per request (support/counters.js, installed only when `count` is asked for, since the
// counting patches slow the process) and answer with the counts; `{ gc: "start" }` and
// `{ gc: "stop" }` answer with the garbage collections in between (`gcCounts`). Each message is
// answered when done.
import * as fs from "node:fs"
import { Session } from "node:inspector/promises"
import { constants, PerformanceObserver } from "node:perf_hooks"
import * as v8 from "node:v8"
import { installCounters } from "./counters.js"

/** Answers the profiler's messages; `entry` is the served build's entry module (its `effect` and pg are patched when counting). */
export const answerControl = async ({ entry, count }) => {
  const session = new Session()
  session.connect()
  const counters = count ? await installCounters(entry, session) : undefined
  const gc = gcCounts()
  process.on("message", async (message) => {
    if (message.gc === "start") {
      gc.reset()
      process.send("done")
    } else if (message.gc === "stop") {
      process.send(gc.read())
    } else if (message.count === "start") {
      await counters.start()
      process.send("done")
    } else if (message.count === "stop") {
      process.send(await counters.stop())
    } else if (message.profile === "start") {
      await session.post("Profiler.enable")
      await session.post("Profiler.start")
      process.send("done")
    } else {
      const { profile } = await session.post("Profiler.stop")
      fs.writeFileSync(message.file, JSON.stringify(profile))
      process.send("done")
    }
  })
}

/**
 * The process's garbage collections, from `perf_hooks`' gc entries (V8's own pauses, cheap enough
 * to observe in every run): scavenges of the young generation and mark-compacts of the old (the
 * incremental steps counted with them), their count and ms; with the young generation's size and
 * the old generation's use when read, which shows how much of what a request allocates outlives
 * a scavenge (docs/operations.md, "The API node's cost per request").
 */
const gcCounts = () => {
  let counts
  const reset = () => {
    counts = { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0, oldBefore: oldUsed() }
  }
  reset()
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        counts.scavenges += 1
        counts.scavengeMs += entry.duration
      } else if (entry.detail.kind !== constants.NODE_PERFORMANCE_GC_WEAKCB) {
        counts.markCompacts += 1
        counts.markCompactMs += entry.duration
      }
    }
  }).observe({ entryTypes: ["gc"] })
  return {
    reset,
    read: () => {
      const newSpace = v8.getHeapSpaceStatistics().find((space) => space.space_name === "new_space")
      return { ...counts, oldAfter: oldUsed(), newSpaceBytes: newSpace?.space_size ?? 0 }
    }
  }
}

const oldUsed = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === "old_space")?.space_used_size ?? 0
