import { Access, AuthorizationDecisions, AuthorizationEndpoints, type Card } from "@issuing/core"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, STORE_KINDS, type TestDatabase } from "../support/databases.js"
import { type DecisionReceiver, startDecisionReceiver } from "../support/decisionReceiver.js"
import { servePlatform } from "../support/platform.js"

const OLD_KEY = Buffer.alloc(32, 11)
const NEW_KEY = Buffer.alloc(32, 12)

/**
 * Vault key rotation (docs/operations.md#the-vault-key): `issuing vault reseal` re-seals authorization
 * endpoint secrets too, so after dropping the old key decisions are still signed with the same secret.
 */
describe.each(STORE_KINDS)("authorization endpoint secrets across a vault key rotation on %s", (kind) => {
  let database: TestDatabase
  let receiver: DecisionReceiver
  beforeAll(async () => {
    database = await createTestDatabase(kind, { migrated: true })
    receiver = await startDecisionReceiver()
  })
  afterAll(async () => {
    receiver?.close()
    await database?.drop()
  })

  it("re-seals the secret and its previous one under the new key; decisions verify with the same secrets after the old key is gone", async () => {
    const first = await servePlatform(database, [OLD_KEY])
    const org = await first.instance.runtime.runPromise(Effect.flatMap(Access, (access) => access.createOrganization("rotation")))
    const { created, rotated } = await first.instance.runtime.runPromise(
      Effect.flatMap(AuthorizationEndpoints, (endpoints) =>
        Effect.gen(function* () {
          const created = yield* endpoints.create(org.program_id, { url: receiver.url("/approve") })
          const rotated = yield* endpoints.rotateSecret(org.program_id, created.id)
          return { created, rotated }
        })
      )
    )
    await first.close()

    const both = await servePlatform(database, [NEW_KEY, OLD_KEY])
    const reseal = Effect.flatMap(AuthorizationEndpoints, (endpoints) => endpoints.resealWithCurrentKey)
    expect(await both.instance.runtime.runPromise(reseal)).toBe(1)
    expect(await both.instance.runtime.runPromise(reseal)).toBe(0)
    await both.close()

    const fresh = await servePlatform(database, [NEW_KEY])
    try {
      const card = { id: "0193f1f0-0000-7000-8000-0000000000c2", object: "card", program_id: org.program_id } as unknown as Card
      const request = { transaction: {}, card, amount: 10, kind: "AUTHORIZATION" as const, partial_approval_capable: false }
      for (const secret of [created.secret, rotated.secret]) {
        await receiver.trust([secret])
        const decided = await fresh.instance.runtime.runPromise(
          Effect.flatMap(AuthorizationDecisions, (decisions) => decisions.decide(org.program_id, request))
        )
        expect(Option.getOrThrow(decided)).toMatchObject({ approved: true, amount: 10, record: { reason: "webhook_approved" } })
        expect((await receiver.log()).at(-1)).toMatchObject({ path: "/approve", verified: true, signatures: 2 })
      }
    } finally {
      await fresh.close()
    }
  })
})
