import { expect, layer } from "@effect/vitest"
import { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import { AccessStore } from "../access/AccessStore.js"
import { isRetryableSqlError, isUniqueViolation, MAX_TRANSACTION_ATTEMPTS, Transactor } from "../sql/Transactor.js"
import type { PortContract } from "./Contract.js"
import { freshOrganization, sampleProgram } from "./Fixtures.js"

/** A failure the transactor must treat as "run the transaction again" (a serialization failure). */
const serializationFailure = () => new SqlError.SqlError({ cause: { code: "40001" }, message: "could not serialize access" })

/** Contract of the Transactor port: atomic units of work, nesting, retries, unique violations. */
export const transactorContract: PortContract = (name, store) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    it.effect("commits every write of a successful transaction", () =>
      Effect.gen(function* () {
        const access = yield* AccessStore
        const transactor = yield* Transactor
        const { organization } = yield* freshOrganization
        const programs = [sampleProgram(organization.id), sampleProgram(organization.id)]
        yield* transactor.withTransaction(Effect.forEach(programs, access.insertProgram))
        for (const program of programs) {
          expect(Option.isSome(yield* access.findProgram(organization.id, program.id))).toBe(true)
        }
      })
    )

    it.effect("rolls back every write when the transaction fails", () =>
      Effect.gen(function* () {
        const access = yield* AccessStore
        const transactor = yield* Transactor
        const { organization } = yield* freshOrganization
        const program = sampleProgram(organization.id)
        const error = yield* Effect.flip(
          transactor.withTransaction(Effect.zipRight(access.insertProgram(program), Effect.fail("business rule broken" as const)))
        )
        expect(error).toBe("business rule broken")
        expect(Option.isNone(yield* access.findProgram(organization.id, program.id))).toBe(true)

        const died = sampleProgram(organization.id)
        yield* Effect.exit(transactor.withTransaction(Effect.zipRight(access.insertProgram(died), Effect.die("defect"))))
        expect(Option.isNone(yield* access.findProgram(organization.id, died.id))).toBe(true)
      })
    )

    it.effect("joins a nested call to the outer transaction", () =>
      Effect.gen(function* () {
        const access = yield* AccessStore
        const transactor = yield* Transactor
        const { organization } = yield* freshOrganization
        const inner = sampleProgram(organization.id)
        const outer = sampleProgram(organization.id)
        // The inner call succeeds, the outer fails afterwards: both writes are undone.
        yield* Effect.flip(
          transactor.withTransaction(
            Effect.gen(function* () {
              yield* access.insertProgram(outer)
              yield* transactor.withTransaction(access.insertProgram(inner))
              return yield* Effect.fail("later failure" as const)
            })
          )
        )
        expect(Option.isNone(yield* access.findProgram(organization.id, inner.id))).toBe(true)
        expect(Option.isNone(yield* access.findProgram(organization.id, outer.id))).toBe(true)

        // A failed nested call that the outer one handles undoes only its own writes.
        const kept = sampleProgram(organization.id)
        const undone = sampleProgram(organization.id)
        yield* transactor.withTransaction(
          Effect.gen(function* () {
            yield* access.insertProgram(kept)
            yield* Effect.ignore(
              transactor.withTransaction(Effect.zipRight(access.insertProgram(undone), Effect.fail("inner failure" as const)))
            )
          })
        )
        expect(Option.isSome(yield* access.findProgram(organization.id, kept.id))).toBe(true)
        expect(Option.isNone(yield* access.findProgram(organization.id, undone.id))).toBe(true)
      })
    )

    it.effect("detects a unique violation, and the transaction stays usable after handling it", () =>
      Effect.gen(function* () {
        const access = yield* AccessStore
        const transactor = yield* Transactor
        const { organization, program } = yield* freshOrganization
        const error = yield* Effect.flip(access.insertProgram(program))
        expect(isUniqueViolation(error)).toBe(true)
        expect(isRetryableSqlError(error)).toBe(false)
        expect(isUniqueViolation(new Error("not sql"))).toBe(false)

        // Inside a transaction, a violation caught around a nested call (a savepoint) leaves the rest intact.
        const after = sampleProgram(organization.id)
        yield* transactor.withTransaction(
          Effect.gen(function* () {
            const nested = yield* Effect.flip(transactor.withTransaction(access.insertProgram(program)))
            expect(isUniqueViolation(nested)).toBe(true)
            yield* access.insertProgram(after)
          })
        )
        expect(Option.isSome(yield* access.findProgram(organization.id, after.id))).toBe(true)
      })
    )

    it.effect("retries the whole transaction on a serialization failure, from the outermost call only", () =>
      Effect.gen(function* () {
        const access = yield* AccessStore
        const transactor = yield* Transactor
        const { organization } = yield* freshOrganization
        let attempts = 0
        const programs: Array<string> = []
        yield* transactor.withTransaction(
          Effect.gen(function* () {
            attempts += 1
            const program = sampleProgram(organization.id)
            programs.push(program.id)
            yield* access.insertProgram(program)
            // The nested call fails as a serialization failure would; the outer attempt is redone.
            yield* transactor.withTransaction(attempts < 3 ? Effect.fail(serializationFailure()) : Effect.void)
          })
        )
        expect(attempts).toBe(3)
        const found = yield* Effect.forEach(programs, (id) => access.findProgram(organization.id, id))
        expect(found.map(Option.isSome)).toEqual([false, false, true])
      })
    )

    it.effect("gives up after a bounded number of attempts", () =>
      Effect.gen(function* () {
        const transactor = yield* Transactor
        let attempts = 0
        const error = yield* Effect.flip(
          transactor.withTransaction(
            Effect.suspend(() => {
              attempts += 1
              return Effect.fail(serializationFailure())
            })
          )
        )
        expect(isRetryableSqlError(error)).toBe(true)
        expect(attempts).toBe(MAX_TRANSACTION_ATTEMPTS)
      })
    )

    it.effect("keeps concurrent transactions apart", () =>
      Effect.gen(function* () {
        const access = yield* AccessStore
        const transactor = yield* Transactor
        const { organization } = yield* freshOrganization
        // Half of them fail after writing; none of their writes may leak into the others' commits.
        const results = yield* Effect.all(
          Array.from({ length: 8 }, (_, index) => {
            const program = sampleProgram(organization.id, { name: `concurrent-${index}` })
            const body = Effect.zipRight(
              access.insertProgram(program),
              Effect.zipRight(Effect.sleep("5 millis"), index % 2 === 0 ? Effect.void : Effect.fail("rollback" as const))
            )
            return Effect.as(Effect.either(transactor.withTransaction(body)), program.id)
          }),
          { concurrency: "unbounded" }
        )
        for (const [index, id] of results.entries()) {
          expect(Option.isSome(yield* access.findProgram(organization.id, id))).toBe(index % 2 === 0)
        }
      })
    )
  })
