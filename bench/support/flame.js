// A V8 .cpuprofile as a text flame graph, top down (`npm run bench -- profile --cpu-prof --flame`):
// each line is a call path's inclusive share of the busy samples (idle left out), with a bar. A
// chain in which one callee holds nearly all of its caller's samples is folded onto one line
// (`a › b › c`), and paths under `minPercent` are left out, so the graph fits a note.

/** A frame, short: its function, its package (ours as `@issuing/<package>`, Node's as `node:`) and file, and line. */
const frameName = (callFrame) => {
  const { url, functionName, lineNumber } = callFrame
  const name = functionName || "(anonymous)"
  if (url === "") return name
  const file = url.split("/").at(-1)
  const ours = url.match(/packages\/([^/]+)\//)
  const modules = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)
  const owner = modules
    ? modules.at(-1).slice("node_modules/".length, -1)
    : ours
      ? `@issuing/${ours[1]}`
      : url.startsWith("node:")
        ? "node"
        : ""
  return `${name} ${owner === "" ? "" : `${owner}/`}${file.replace(/^node:/, "")}:${lineNumber + 1}`
}

/** The flame graph's lines for a parsed .cpuprofile. */
export const flameLines = (profile, { minPercent = 2, width = 30, fold = 0.97 } = {}) => {
  const nodes = new Map(profile.nodes.map((node) => [node.id, { node, self: 0, total: 0 }]))
  for (const id of profile.samples) nodes.get(id).self++
  const idle = (entry) => entry.node.callFrame.functionName === "(idle)"
  const sum = (entry) => {
    entry.total = idle(entry) ? 0 : entry.self
    for (const child of entry.node.children ?? []) entry.total += sum(nodes.get(child))
    return entry.total
  }
  const root = nodes.get(profile.nodes[0].id)
  const busy = sum(root) || 1
  const lines = []
  const kidsOf = (entry) =>
    (entry.node.children ?? [])
      .map((id) => nodes.get(id))
      .filter((kid) => !idle(kid) && (100 * kid.total) / busy >= minPercent)
      .sort((a, b) => b.total - a.total)
  const walk = (entry, indent) => {
    for (let kid of kidsOf(entry)) {
      const names = [frameName(kid.node.callFrame)]
      for (let next = kidsOf(kid); next.length === 1 && next[0].total >= fold * kid.total; next = kidsOf(kid)) {
        kid = next[0]
        names.push(frameName(kid.node.callFrame))
      }
      const percent = (100 * kid.total) / busy
      const bar = "█".repeat(Math.max(1, Math.round((percent / 100) * width)))
      // A long fold shows its first and last two frames.
      const path = names.length > 4 ? [names[0], "…", ...names.slice(-2)].join(" › ") : names.join(" › ")
      lines.push(`${percent.toFixed(1).padStart(5)} % ${bar.padEnd(width)} ${indent}${path}`)
      walk(kid, `${indent}  `)
    }
  }
  walk(root, "")
  return lines
}
