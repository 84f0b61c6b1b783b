#!/usr/bin/env node
// `npm run bench -- <name>`: runs bench/<name>.js (after `tsc -b`, against the built packages).
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

const here = import.meta.dirname
const available = fs
  .readdirSync(here)
  .filter((file) => file.endsWith(".js") && file !== "run.js")
  .map((file) => file.slice(0, -3))
// Options are `--name=value`; `--name value` (e.g. `soak --minutes 10`) is read as `--name=value`.
const args = []
for (const arg of process.argv.slice(2)) {
  const previous = args.at(-1)
  if (!arg.startsWith("-") && previous?.startsWith("--") && !previous.includes("=") && !available.includes(arg)) {
    args[args.length - 1] = `${previous}=${arg}`
  } else args.push(arg)
}
const names = args.filter((arg) => !arg.startsWith("-"))
if (names.length === 0) {
  console.log(`Usage: npm run bench -- <${available.join("|")}> [...]`)
  process.exit(2)
}
for (const name of names) {
  if (!available.includes(name)) {
    console.error(`No benchmark '${name}'. Available: ${available.join(", ")}`)
    process.exit(2)
  }
  const module = await import(pathToFileURL(path.join(here, `${name}.js`)).href)
  await module.run(args.filter((arg) => arg.startsWith("-")))
}
