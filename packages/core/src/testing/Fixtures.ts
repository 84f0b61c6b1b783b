import { Effect, Fiber, Schedule } from "effect"
import type { Organization, Role, StoredApiKey, StoredProgram } from "../access/Records.js"
import { AccessStore } from "../access/AccessStore.js"
import { newId } from "../platform/Ids.js"

/** A timestamp with millisecond precision, as every store keeps them. */
const stamp = (at: Date = new Date()): string => at.toISOString()

/** A program record of the organization (not stored). */
export const sampleProgram = (organizationId: string, overrides: Partial<StoredProgram> = {}): StoredProgram => {
  const now = stamp()
  return {
    id: newId(),
    object: "program",
    organization_id: organizationId,
    name: "Program",
    bin: "400000",
    require_verified_cardholder: false,
    created_at: now,
    updated_at: now,
    ...overrides
  }
}

/** An API key record of the organization (not stored). */
export const sampleApiKey = (organizationId: string, overrides: Partial<StoredApiKey> & { role?: Role } = {}): StoredApiKey => ({
  id: newId(),
  object: "api_key",
  organization_id: organizationId,
  name: "Key",
  role: "admin",
  program_ids: null,
  pan_reveal: false,
  card_display: true,
  inbound_funding: false,
  network: false,
  created_at: stamp(),
  revoked_at: null,
  ...overrides
})

/** Stores a new organization with one program; for contracts whose rows reference a program. */
export const freshOrganization = Effect.gen(function* () {
  const store = yield* AccessStore
  const organization: Organization = { id: newId(), name: "Contract organization", created_at: stamp() }
  yield* store.insertOrganization(organization)
  const program = sampleProgram(organization.id)
  yield* store.insertProgram(program)
  return { organization, program }
})

/**
 * Waits until `fiber` is suspended — parked in an asynchronous wait (a latch, a lock, a queue) —
 * and fails if it ends first: a race test's explicit synchronisation before it lets the other
 * side go, in place of a sleep that passes whether or not the wait ever began.
 */
export const awaitSuspended = <A, E>(fiber: Fiber.RuntimeFiber<A, E>) =>
  Effect.repeat(Fiber.status(fiber), { until: (status) => status._tag !== "Running", schedule: Schedule.spaced("1 millis") }).pipe(
    Effect.zipRight(Fiber.poll(fiber)),
    Effect.flatMap((exit) => (exit._tag === "Some" ? Effect.dieMessage("The fiber ended instead of waiting") : Effect.void))
  )
