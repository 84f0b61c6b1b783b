// What a server does per request, counted in its own process for `npm run bench -- profile
// --count` (docs/operations.md#volume, "The Node side, profiled"): the Effect operations its fibers
// run, by kind, and the fibers that ran them; FiberRef writes; fiber suspensions (each async
// boundary: a Deferred awaited, a callback, a yield); socket writes, the HTTP server's and the
// others' (the pg driver's); the pg driver's statements by their first words; and the bytes
// allocated on V8's heap (V8's sampling heap profiler, keeping the objects garbage collection
// freed, so the figure is an estimate to a few percent).
//
// Counting patches prototypes: Effect's FiberRuntime (reached by the file path of the `effect` copy
// the served build resolves — another build may have its own), net.Socket's writes and pg's
// Client.query. Only for a bench: a patched process runs slower.
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

/**
 * Installs the counters into this process for the build whose entry module is `entry` (a file
 * path); returns `start()` and `stop()`, `stop` resolving with what was counted in between.
 */
export const installCounters = async (entry, session) => {
  const require = createRequire(entry)
  const effectRoot = path.dirname(path.dirname(require.resolve("effect")))
  const { FiberRuntime } = await import(pathToFileURL(path.join(effectRoot, "esm", "internal", "fiberRuntime.js")).href)
  let counting = false
  const ops = new Map()
  // Operations by where they come from: the source text of the function each runs (a continuation,
  // a thunk, a `withFiberRuntime` body), which names the combinator (`acquireUseRelease`, `onExit`,
  // `map`) or our own closure; Effect's operations carry no source position.
  const origins = new Map()
  const sourceOf = (f) => (typeof f === "function" ? f.toString().replace(/\s+/g, " ").slice(0, 90) : "")
  const originOf = (op, effect) => {
    switch (op) {
      case "Sync":
      case "WithRuntime":
      case "Async":
        return sourceOf(effect.effect_instruction_i0)
      case "OnSuccess":
      case "OnFailure":
      case "OnSuccessAndFailure":
      case "UpdateRuntimeFlags":
        return sourceOf(effect.effect_instruction_i1)
      case "Commit":
        return typeof effect.commit === "function" && effect.constructor?.name === "EffectPrimitive"
          ? sourceOf(effect.commit)
          : (effect.constructor?.name ?? "")
      case "Tag":
        return String(effect.key ?? "")
      default:
        return ""
    }
  }
  const fibers = new Set()
  let fiberRefSets = 0
  let suspensions = 0
  const writes = { http: 0, other: 0, httpBytes: 0, otherBytes: 0 }
  const statements = new Map()

  const proto = FiberRuntime.prototype
  for (const op of [
    "Tag",
    "Sync",
    "Success",
    "Failure",
    "WithRuntime",
    "UpdateRuntimeFlags",
    "OnSuccess",
    "OnFailure",
    "OnSuccessAndFailure",
    "Async",
    "Yield",
    "While",
    "Iterator",
    "Commit"
  ]) {
    const original = proto[op]
    if (typeof original !== "function") continue
    proto[op] = function (effect) {
      if (counting) {
        ops.set(op, (ops.get(op) ?? 0) + 1)
        const origin = `${op} ${originOf(op, effect)}`
        origins.set(origin, (origins.get(origin) ?? 0) + 1)
        fibers.add(this)
        if (op === "Async" || op === "Yield") suspensions++
      }
      return original.call(this, effect)
    }
  }
  // A FiberRef write copies the fiber's map of FiberRefs: which FiberRefs are written, named by
  // their initial value (Effect's FiberRefs have no names; the context's is an empty Context).
  const writers = new Map()
  const labelOf = (fiberRef) => {
    const initial = fiberRef.initial
    const shown =
      initial === undefined || initial === null
        ? String(initial)
        : typeof initial === "object"
          ? (initial._tag ?? initial.constructor?.name ?? "object") +
            (initial.unsafeMap ? `(${[...initial.unsafeMap.keys()].slice(0, 2).join(",")})` : "")
          : JSON.stringify(initial)
    return shown.slice(0, 60)
  }
  const noteFiberRefWrite = (fiberRef) => {
    fiberRefSets++
    const name = fiberRef === undefined ? "(all, a fiber's refs replaced)" : labelOf(fiberRef)
    writers.set(name, (writers.get(name) ?? 0) + 1)
  }
  const setFiberRef = proto.setFiberRef
  proto.setFiberRef = function (fiberRef, value) {
    if (counting) noteFiberRefWrite(fiberRef)
    return setFiberRef.call(this, fiberRef, value)
  }
  const setFiberRefs = proto.setFiberRefs
  proto.setFiberRefs = function (fiberRefs) {
    if (counting) noteFiberRefWrite(undefined)
    return setFiberRefs.call(this, fiberRefs)
  }

  const sizeOf = (chunk) => (typeof chunk === "string" ? Buffer.byteLength(chunk) : (chunk?.length ?? 0))
  const noteWrite = (socket, bytes) => {
    if (!counting) return
    const kind = socket.server ? "http" : "other"
    writes[kind]++
    writes[`${kind}Bytes`] += bytes
  }
  const write = net.Socket.prototype._write
  net.Socket.prototype._write = function (chunk, encoding, callback) {
    noteWrite(this, sizeOf(chunk))
    return write.call(this, chunk, encoding, callback)
  }
  const writev = net.Socket.prototype._writev
  net.Socket.prototype._writev = function (chunks, callback) {
    noteWrite(
      this,
      chunks.reduce((sum, { chunk }) => sum + sizeOf(chunk), 0)
    )
    return writev.call(this, chunks, callback)
  }

  // pg is CommonJS: its Client is one object for every importer of this copy.
  try {
    const pgRequire = createRequire(require.resolve("@effect/sql-pg"))
    const { Client } = pgRequire("pg")
    const query = Client.prototype.query
    Client.prototype.query = function (config, ...rest) {
      if (counting) {
        const text = typeof config === "string" ? config : (config?.text ?? "")
        const words = text.replace(/\s+/g, " ").trim().split(" ").slice(0, 4).join(" ").slice(0, 60)
        statements.set(words, (statements.get(words) ?? 0) + 1)
      }
      return query.call(this, config, ...rest)
    }
  } catch {
    // A build without the pg driver (the floor): no statements to count.
  }

  return {
    start: async () => {
      ops.clear()
      origins.clear()
      fibers.clear()
      statements.clear()
      writers.clear()
      fiberRefSets = 0
      suspensions = 0
      for (const key of Object.keys(writes)) writes[key] = 0
      await session.post("HeapProfiler.enable")
      await session.post("HeapProfiler.startSampling", {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
      counting = true
    },
    stop: async () => {
      counting = false
      const { profile } = await session.post("HeapProfiler.stopSampling")
      await session.post("HeapProfiler.disable")
      // Kept for a viewer (Chrome DevTools' Memory tab opens .heapprofile files).
      const heapProfile = path.join(os.tmpdir(), `issuing-count-${process.pid}-${Date.now()}.heapprofile`)
      fs.writeFileSync(heapProfile, JSON.stringify(profile))
      let allocatedBytes = 0
      let countingBytes = 0
      const byFunction = new Map()
      // What the counting allocates itself (an origin's source text per operation, its maps: about
      // 400 KB a request) is left out, so the figure is the served build's own: the self size of
      // this file's frames and of the builtins they call (a patched operation's call of the
      // original is walked as the served build's).
      const own = (node) => node.selfSize + node.children.reduce((sum, child) => sum + own(child), 0)
      const walk = (node) => {
        if (node.callFrame.url === import.meta.url) {
          countingBytes += node.selfSize
          for (const child of node.children) {
            if (child.callFrame.url === "") countingBytes += own(child)
            else walk(child)
          }
          return
        }
        allocatedBytes += node.selfSize
        if (node.selfSize > 0) {
          const frame = node.callFrame
          const name = `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*node_modules\//, "").replace(/^.*packages\//, "")}:${frame.lineNumber + 1}`
          byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize)
        }
        for (const child of node.children) walk(child)
      }
      walk(profile.head)
      return {
        ops: Object.fromEntries(ops),
        origins: Object.fromEntries([...origins].sort((a, b) => b[1] - a[1]).slice(0, 40)),
        fibers: fibers.size,
        fiberRefSets,
        fiberRefWriters: Object.fromEntries([...writers].sort((a, b) => b[1] - a[1]).slice(0, 25)),
        suspensions,
        writes: { ...writes },
        statements: Object.fromEntries(statements),
        allocatedBytes,
        countingBytes,
        heapProfile,
        allocatedBy: Object.fromEntries([...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25))
      }
    }
  }
}
