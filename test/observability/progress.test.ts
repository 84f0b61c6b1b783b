import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { progress } from "../../packages/http/src/Progress.js"
import { runCli } from "../support/cli.js"

const recorder = (isTTY: boolean) => {
  const written: Array<string> = []
  let clockMs = 0
  return {
    written,
    tick: (ms: number) => (clockMs += ms),
    report: progress({ isTTY, write: (text: string) => written.push(text) }, { now: () => clockMs })
  }
}

describe("progress of long commands", () => {
  it("not on a terminal: one line per step, with done/total, percent and rate", () => {
    const { report, tick, written } = recorder(false)
    const step = report.step("re-sealing cards", 400)
    for (let i = 0; i < 400; i++) step.advance()
    tick(2000)
    step.finish(400)
    const unknown = report.step("migration 0001_access", undefined)
    unknown.finish(1)
    expect(written).toEqual([
      "issuing: re-sealing cards: 400/400 (100%, 2.0 s, 200/s) done\n",
      "issuing: migration 0001_access: 1 (0.0 s) done\n"
    ])
  })

  it("on a terminal: one line redrawn in place (at most every 100 ms), then the final line", () => {
    const { report, tick, written } = recorder(true)
    const step = report.step("re-sealing cards", 1000)
    for (let i = 0; i < 10; i++) {
      tick(50)
      step.advance(100)
    }
    step.finish()
    expect(written.every((text) => text.startsWith("\r\u001b[2K"))).toBe(true)
    expect(written[0]).toBe("\r\u001b[2Kissuing: re-sealing cards: 0/1000 (0%, 0.0 s)")
    // 10 advances 50 ms apart: redrawn at most every other one.
    expect(written.length).toBeGreaterThan(2)
    expect(written.length).toBeLessThanOrEqual(7)
    expect(written.at(-1)).toBe("\r\u001b[2Kissuing: re-sealing cards: 1000/1000 (100%, 0.5 s, 2000/s) done\n")
  })

  it("issuing migrate reports each migration on stderr and keeps its stdout line", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-progress-"))
    try {
      const result = await runCli(["migrate"], { ISSUING_DATABASE_URL: `sqlite:${path.join(dir, "x.db")}` }, dir)
      expect(result.code, result.stderr).toBe(0)
      const applied = /applied (.+)$/m.exec(result.stdout)![1]!.split(", ")
      expect(result.stdout.trim().split("\n")).toHaveLength(1)
      const lines = result.stderr.trim().split("\n")
      expect(lines).toEqual(applied.map((name) => expect.stringMatching(new RegExp(`^issuing: migration ${name}: 1/1 \\(100%, .* done$`))))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
