// The profiler's control of a served process (support/profiledServer.js, support/floorServer.js),
// over its IPC channel: `{ profile: "start" }` starts V8's CPU profiler and `{ profile: "stop", file }`
// writes the profile to `file`; `{ count: "start" }` and `{ count: "stop" }` count what the process
// does per request (support/counters.js, installed only when `count` is asked for, since the
// counting patches slow the process) and answer with the counts. Each message is answered when done.
import * as fs from "node:fs"
import { Session } from "node:inspector/promises"
import { installCounters } from "./counters.js"

/** Answers the profiler's messages; `entry` is the served build's entry module (its `effect` and pg are patched when counting). */
export const answerControl = async ({ entry, count }) => {
  const session = new Session()
  session.connect()
  const counters = count ? await installCounters(entry, session) : undefined
  process.on("message", async (message) => {
    if (message.count === "start") {
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
