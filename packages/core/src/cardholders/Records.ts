import { Schema } from "effect"
import { MAX_EMAIL_LENGTH } from "../platform/Email.js"
import { CountryCode } from "../platform/Countries.js"
import { oneOf } from "../platform/Literals.js"
import { Metadata, MetadataInput } from "../platform/Metadata.js"

/**
 * Cardholders (docs/cardholders.md): the people and businesses a program issues cards to, with the
 * outcome of the program's own identity checks. One schema each for the record and the inputs,
 * decoded once at the edge.
 */

/** Longest name, address line, city, state or postal code accepted, in characters. */
export const MAX_CARDHOLDER_TEXT_LENGTH = 200
/** Longest verification reference (the KYC provider's case id), in characters. */
export const MAX_VERIFICATION_REFERENCE_LENGTH = 200

export const CardholderType = oneOf("individual", "business")
export type CardholderType = typeof CardholderType.Type

export const CardholderStatus = oneOf("PENDING_VERIFICATION", "VERIFIED", "REJECTED")
export type CardholderStatus = typeof CardholderStatus.Type

/** The outcomes `POST /v1/cardholders/{id}/verification` records. */
export const VerificationOutcome = oneOf("VERIFIED", "REJECTED")
export type VerificationOutcome = typeof VerificationOutcome.Type

/** Text of a cardholder field: trimmed, not empty, bounded. */
const Text = (max = MAX_CARDHOLDER_TEXT_LENGTH) =>
  Schema.Trim.pipe(Schema.minLength(1, { message: () => "must not be empty" }), Schema.maxLength(max))

const Email = Schema.String.pipe(
  Schema.maxLength(MAX_EMAIL_LENGTH),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "is not a valid email address" })
)

/** E.164: a plus and 8 to 15 digits. */
const PhoneNumber = Schema.String.pipe(
  Schema.pattern(/^\+[1-9]\d{7,14}$/, { message: () => "must be an E.164 phone number, e.g. +14155550123" })
)

/** What the cardholder fields mean, for the record and the inputs alike. */
const ABOUT = {
  line1: "The street address.",
  line2: "The second address line (apartment, suite), or null.",
  city: "The city.",
  state: "The state, province or region, or null.",
  postal_code: "The postal code.",
  country: "The country (ISO 3166-1 alpha-2, upper case).",
  email: "The cardholder's email address, or null. Personal data: never written to logs.",
  phone_number: "The cardholder's phone number in E.164 (+14155550123), or null. Personal data: never written to logs.",
  billing_address: "The cardholder's billing address.",
  individual: "An individual's name and date of birth; null for a business.",
  dob: "The date of birth. Personal data: never written to logs.",
  reference: "The program's own reference for its check (its KYC provider's case id), or null."
} as const

export const BillingAddress = Schema.Struct({
  line1: Schema.String.annotations({ description: ABOUT.line1 }),
  line2: Schema.NullOr(Schema.String).annotations({ description: ABOUT.line2 }),
  city: Schema.String.annotations({ description: ABOUT.city }),
  state: Schema.NullOr(Schema.String).annotations({ description: ABOUT.state }),
  postal_code: Schema.String.annotations({ description: ABOUT.postal_code }),
  country: Schema.String.annotations({ description: ABOUT.country })
}).annotations({ identifier: "BillingAddress" })
export type BillingAddress = typeof BillingAddress.Type

export const DateOfBirth = Schema.Struct({
  day: Schema.Number.annotations({ description: "The day of the month, 1 to 31." }),
  month: Schema.Number.annotations({ description: "The month, 1 to 12." }),
  year: Schema.Number.annotations({ description: "The year, four digits." })
}).annotations({ identifier: "DateOfBirth", description: ABOUT.dob })
export type DateOfBirth = typeof DateOfBirth.Type

export const IndividualDetails = Schema.Struct({
  first_name: Schema.String.annotations({ description: "The individual's first name." }),
  last_name: Schema.String.annotations({ description: "The individual's last name." }),
  dob: DateOfBirth
}).annotations({ identifier: "CardholderIndividual" })
export type IndividualDetails = typeof IndividualDetails.Type

export const CardholderVerification = Schema.Struct({
  status: CardholderStatus,
  reference: Schema.NullOr(Schema.String).annotations({ description: ABOUT.reference }),
  updated_at: Schema.String
}).annotations({
  identifier: "CardholderVerification",
  description: "The outcome of the program's identity check, as it last recorded it."
})
export type CardholderVerification = typeof CardholderVerification.Type

/** The cardholder as every API response shows it. */
export const Cardholder = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("cardholder"),
  program_id: Schema.String,
  type: CardholderType,
  name: Schema.String,
  email: Schema.NullOr(Schema.String).annotations({ description: ABOUT.email }),
  phone_number: Schema.NullOr(Schema.String).annotations({ description: ABOUT.phone_number }),
  billing_address: Schema.propertySignature(BillingAddress).annotations({ description: ABOUT.billing_address }),
  individual: Schema.NullOr(IndividualDetails).annotations({ description: ABOUT.individual }),
  metadata: Metadata,
  status: CardholderStatus,
  verification: CardholderVerification,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Cardholder" })
export type Cardholder = typeof Cardholder.Type

// ---- inputs, decoded once at the edge ---------------------------------------------------------

const BillingAddressInput = Schema.Struct({
  line1: Schema.propertySignature(Text()).annotations({ description: ABOUT.line1 }),
  line2: Schema.optional(Schema.NullOr(Text()).annotations({ description: ABOUT.line2 })),
  city: Schema.propertySignature(Text()).annotations({ description: ABOUT.city }),
  state: Schema.optional(Schema.NullOr(Text()).annotations({ description: ABOUT.state })),
  postal_code: Schema.propertySignature(Text(32)).annotations({ description: ABOUT.postal_code }),
  country: Schema.propertySignature(CountryCode).annotations({ description: ABOUT.country })
}).annotations({ description: ABOUT.billing_address })

/** A calendar date of birth in the past, not before 1900 (the message never echoes it). */
const DateOfBirthInput = Schema.Struct({
  day: Schema.Int.pipe(Schema.between(1, 31)).annotations({ description: "The day of the month, 1 to 31." }),
  month: Schema.Int.pipe(Schema.between(1, 12)).annotations({ description: "The month, 1 to 12." }),
  year: Schema.Int.pipe(Schema.between(1900, 9999)).annotations({ description: "The year, 1900 or later." })
}).pipe(
  Schema.filter((dob) => {
    const date = new Date(Date.UTC(dob.year, dob.month - 1, dob.day))
    if (date.getUTCMonth() !== dob.month - 1) return "is not a calendar date"
    return date.getTime() <= Date.now() || "must be in the past"
  })
)

const IndividualInput = Schema.Struct({
  first_name: Schema.propertySignature(Text()).annotations({ description: "The individual's first name." }),
  last_name: Schema.propertySignature(Text()).annotations({ description: "The individual's last name." }),
  dob: Schema.propertySignature(DateOfBirthInput).annotations({ description: ABOUT.dob })
})

/** POST /v1/cardholders. */
export const CreateCardholder = Schema.Struct({
  type: CardholderType,
  name: Schema.propertySignature(Text()).annotations({ description: "The cardholder's full name, or the business's name." }),
  email: Schema.optional(Schema.NullOr(Email).annotations({ description: ABOUT.email })),
  phone_number: Schema.optional(Schema.NullOr(PhoneNumber).annotations({ description: ABOUT.phone_number })),
  billing_address: BillingAddressInput,
  individual: Schema.optional(
    Schema.NullOr(IndividualInput).annotations({ description: `${ABOUT.individual} Required for an individual.` })
  ),
  metadata: Schema.optional(MetadataInput)
}).annotations({ identifier: "CreateCardholder" })
export type CreateCardholder = typeof CreateCardholder.Type

/** PATCH /v1/cardholders/{cardholder_id}: the fields to change; a field left out is kept, null clears an optional one. */
export const UpdateCardholder = Schema.Struct({
  name: Schema.optional(Text()).annotations({ description: "The cardholder's full name, or the business's name." }),
  email: Schema.optional(Schema.NullOr(Email).annotations({ description: ABOUT.email })),
  phone_number: Schema.optional(Schema.NullOr(PhoneNumber).annotations({ description: ABOUT.phone_number })),
  billing_address: Schema.optional(BillingAddressInput),
  individual: Schema.optional(Schema.NullOr(IndividualInput).annotations({ description: ABOUT.individual })),
  metadata: Schema.optional(MetadataInput)
}).annotations({ identifier: "UpdateCardholder" })
export type UpdateCardholder = typeof UpdateCardholder.Type

/** POST /v1/cardholders/{cardholder_id}/verification: the outcome of the program's own check. */
export const RecordVerification = Schema.Struct({
  status: VerificationOutcome,
  reference: Schema.optional(Schema.NullOr(Text(MAX_VERIFICATION_REFERENCE_LENGTH)).annotations({ description: ABOUT.reference }))
}).annotations({ identifier: "RecordVerification" })
export type RecordVerification = typeof RecordVerification.Type

/** The filters of GET /v1/cardholders (paging aside). */
export const CardholderFilter = Schema.Struct({
  status: Schema.optional(CardholderStatus),
  email: Schema.optional(Email).annotations({ description: "Only the cardholders with this email address." })
})
export type CardholderFilter = typeof CardholderFilter.Type
