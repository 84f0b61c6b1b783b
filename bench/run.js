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
const names = process.argv.slice(2).filter((arg) => !arg.startsWith("-"))
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
  await module.run(process.argv.slice(2).filter((arg) => arg.startsWith("-")))
}
