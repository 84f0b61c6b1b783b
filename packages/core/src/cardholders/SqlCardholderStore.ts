import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { metadataOf, metadataText } from "../platform/Metadata.js"
import { fromJson, toBool, toIso } from "../platform/Rows.js"
import { listTotal, maintained } from "../sql/ListCounts.js"
import { pageRows } from "../sql/OrderBy.js"
import { CardholderStore, type CardholderStoreService } from "./CardholderStore.js"
import { CARDHOLDER_ORDER_FIELDS } from "./OrderFields.js"
import type { BillingAddress, Cardholder, CardholderStatus, CardholderType, IndividualDetails } from "./Records.js"

/** A cardholder row, decoded alike from both dialects (the address and the individual are JSON text). */
const toCardholder = (row: any): Cardholder => ({
  id: row.id,
  object: "cardholder",
  program_id: row.program_id,
  type: row.type as CardholderType,
  name: row.name,
  email: row.email ?? null,
  phone_number: row.phone_number ?? null,
  billing_address: fromJson<BillingAddress>(row.billing_address),
  individual: row.individual === null || row.individual === undefined ? null : fromJson<IndividualDetails>(row.individual),
  metadata: metadataOf(row.metadata),
  status: row.status as CardholderStatus,
  verification: {
    status: row.status as CardholderStatus,
    reference: row.verification_reference ?? null,
    updated_at: toIso(row.verification_updated_at)
  },
  created_at: toIso(row.created_at),
  updated_at: toIso(row.updated_at)
})

const individualText = (cardholder: Cardholder) => (cardholder.individual === null ? null : JSON.stringify(cardholder.individual))

/** Cardholders over SqlClient: one SQL text for both dialects except the row lock. */
export const SqlCardholderStoreLive = Layer.effect(
  CardholderStore,
  Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    // SQLite writes are BEGIN IMMEDIATE (one writer), so only PostgreSQL needs the row lock.
    const forUpdate = (lock: boolean) =>
      lock ? sql.onDialectOrElse({ pg: () => sql.literal(" FOR UPDATE"), orElse: () => sql.literal("") }) : sql.literal("")
    const store: CardholderStoreService = {
      insert: (c) =>
        sql`INSERT INTO issuing_cardholders
              (id, program_id, type, name, email, phone_number, billing_address, individual, metadata, status,
               verification_reference, verification_updated_at, created_at, updated_at)
            VALUES (${c.id}, ${c.program_id}, ${c.type}, ${c.name}, ${c.email}, ${c.phone_number},
                    ${JSON.stringify(c.billing_address)}, ${individualText(c)}, ${metadataText(c.metadata)}, ${c.status},
                    ${c.verification.reference}, ${c.verification.updated_at}, ${c.created_at}, ${c.updated_at})`.pipe(Effect.asVoid),
      find: (programId, id, lock = false) =>
        sql`SELECT * FROM issuing_cardholders WHERE id = ${id} AND program_id = ${programId}${forUpdate(lock)}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toCardholder))
        ),
      update: (c) =>
        sql`UPDATE issuing_cardholders
            SET name = ${c.name}, email = ${c.email}, phone_number = ${c.phone_number},
                billing_address = ${JSON.stringify(c.billing_address)}, individual = ${individualText(c)},
                metadata = ${metadataText(c.metadata)}, status = ${c.status}, verification_reference = ${c.verification.reference},
                verification_updated_at = ${c.verification.updated_at}, updated_at = ${c.updated_at}
            WHERE id = ${c.id} AND program_id = ${c.program_id}`.pipe(Effect.asVoid),
      // Each filter combination is a range of one index of migration 0705 (program, [status,] [email,] order column, id).
      list: (programId, filter, window) => {
        const conditions = [sql`program_id = ${programId}`]
        if (filter.status !== undefined) conditions.push(sql`status = ${filter.status}`)
        if (filter.email !== undefined) conditions.push(sql`email = ${filter.email}`)
        return Effect.all({
          rows: pageRows(sql, window, CARDHOLDER_ORDER_FIELDS, {
            select: sql.literal("*"),
            from: sql.literal("issuing_cardholders"),
            where: sql.and(conditions)
          }).pipe(Effect.map((rows) => rows.map(toCardholder))),
          total: listTotal(sql, maintained("cardholders", programId, filter))
        })
      },
      requiresVerifiedCardholder: (programId) =>
        sql`SELECT require_verified_cardholder FROM issuing_programs WHERE id = ${programId}`.pipe(
          Effect.map((rows) => rows.length > 0 && toBool(rows[0]!.require_verified_cardholder))
        )
    }
    return store
  })
)
