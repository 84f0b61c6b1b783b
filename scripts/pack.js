#!/usr/bin/env node
// `npm run pack [-- DIR] [--json]`: packs every published package (@issuing/core, store-sqlite,
// store-pg, http, client) into one folder (default ./packs), each built from source by its
// prepack, and prints how to install them in a host app until they are on a registry
// (README.md#installing-from-this-repository). test/packaging installs from exactly these tarballs.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const ROOT = path.resolve(import.meta.dirname, "..")
const PACKAGES = ["core", "store-sqlite", "store-pg", "http", "client"]

const args = process.argv.slice(2)
const json = args.includes("--json")
const destination = path.resolve(args.find((arg) => !arg.startsWith("--")) ?? path.join(ROOT, "packs"))
fs.mkdirSync(destination, { recursive: true })

const packed = spawnSync(
  "npm",
  ["pack", ...PACKAGES.flatMap((dir) => ["--workspace", `packages/${dir}`]), "--pack-destination", destination, "--json"],
  { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024 }
)
if (packed.status !== 0) {
  console.error(`npm pack failed (exit ${packed.status})`)
  process.exit(packed.status ?? 1)
}
const entries = JSON.parse(packed.stdout)
if (json) {
  process.stdout.write(`${JSON.stringify(entries)}\n`)
} else {
  const file = (name) => path.join(destination, entries.find((entry) => entry.name === name).filename)
  const relative = (name) => path.relative(process.cwd(), file(name)) || file(name)
  console.log(`Packed ${entries.length} packages into ${destination}:`)
  for (const entry of entries) console.log(`  ${entry.filename}  (${(entry.size / 1024).toFixed(0)} KiB)`)
  console.log('\nIn your app (package.json with "type": "module" and "allowScripts": {"better-sqlite3": true}):')
  console.log(`  npm install ${["@issuing/core", "@issuing/http", "@issuing/store-sqlite"].map(relative).join(" ")}`)
  console.log(`  npm install ${["@issuing/core", "@issuing/http", "@issuing/store-pg"].map(relative).join(" ")}   # or PostgreSQL`)
  console.log(`  npm install ${["@issuing/core", "@issuing/client"].map(relative).join(" ")}   # the client alone`)
}
