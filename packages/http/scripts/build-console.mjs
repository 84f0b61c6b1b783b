// Bundles the console's browser code (src/console/browser/) into dist/console/console.js, at
// build time only: the server reads the file and never runs a bundler (docs/console.md).
import { buildSync } from "esbuild"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** Builds the console's bundle; returns its path and size in bytes. */
export const buildConsole = () => {
  const outfile = `${root}dist/console/console.js`
  const result = buildSync({
    entryPoints: [`${root}src/console/browser/main.ts`],
    outfile,
    bundle: true,
    minify: true,
    format: "iife",
    target: ["es2020"],
    platform: "browser",
    legalComments: "none",
    metafile: true,
    logLevel: "warning"
  })
  return { outfile, bytes: result.metafile.outputs[Object.keys(result.metafile.outputs)[0]].bytes }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { outfile, bytes } = buildConsole()
  // On stderr: `npm pack --json` (scripts/pack.js) reads its stdout, prepack output included, as JSON.
  console.error(`console bundle: ${outfile} (${bytes} bytes)`)
}
