import { Schema } from "effect"
import { isUuid } from "../platform/Ids.js"
import { oneOf } from "../platform/Literals.js"

/**
 * Access records and request inputs: organizations, programs, API keys, and the caller a request
 * runs as. Records the API shows are one schema each, used by the HTTP API and, through
 * `typeof X.Type`, by the service and the store; inputs are decoded once at the edge.
 */

/** Largest number of programs one key may be limited to. */
export const MAX_PROGRAM_IDS = 100
/** Longest name of a program or an API key, in characters. */
export const MAX_NAME_LENGTH = 200

/** Roles: admin (everything), developer (program resources), viewer (read only); see docs/api.md. */
export const Role = oneOf("admin", "developer", "viewer")
export type Role = typeof Role.Type

/** An organization: the owner of programs and API keys. */
export const Organization = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  created_at: Schema.String
})
export type Organization = typeof Organization.Type

/** What the key and program fields mean, for the records and the inputs alike. */
const ABOUT = {
  bin: "The program's BIN: the 6 to 8 leading digits of its card numbers.",
  require_verified_cardholder: "Whether every new card needs a VERIFIED cardholder (docs/cardholders.md#requiring-verified-cardholders).",
  program_ids: "The programs the key may use, or null for every program of the organization.",
  pan_reveal: "Whether the key may reveal card numbers and codes and search by number.",
  card_display: "Whether the key may create embed sessions for the secure card display.",
  inbound_funding: "Whether the key may post inbound transfers from an external rail (funding a wallet).",
  network: "Whether the key may send card network messages (POST /v1/network/card-messages) and network events."
} as const

/** A card program (a BIN range) as the API shows it. */
export const Program = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("program"),
  name: Schema.String,
  bin: Schema.String.annotations({ description: ABOUT.bin }),
  require_verified_cardholder: Schema.Boolean.annotations({ description: ABOUT.require_verified_cardholder }),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Program" })
export type Program = typeof Program.Type

/** A program as stored: what the API shows and the organization that owns it. */
export const StoredProgram = Schema.Struct({ ...Program.fields, organization_id: Schema.String })
export type StoredProgram = typeof StoredProgram.Type

/** An API key as the API shows it: never its secret. */
export const ApiKey = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("api_key"),
  name: Schema.String,
  role: Role,
  program_ids: Schema.NullOr(Schema.Array(Schema.String)).annotations({ description: ABOUT.program_ids }),
  pan_reveal: Schema.Boolean.annotations({ description: ABOUT.pan_reveal }),
  card_display: Schema.Boolean.annotations({ description: ABOUT.card_display }),
  inbound_funding: Schema.Boolean.annotations({ description: ABOUT.inbound_funding }),
  network: Schema.Boolean.annotations({ description: ABOUT.network }),
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String).annotations({ description: "When the key was revoked (RFC 3339, UTC), or null." })
}).annotations({ identifier: "ApiKey" })
export type ApiKey = typeof ApiKey.Type

/** An API key as stored: the secret itself is never kept (only its SHA-256, beside the row), plus its organization. */
export const StoredApiKey = Schema.Struct({ ...ApiKey.fields, organization_id: Schema.String })
export type StoredApiKey = typeof StoredApiKey.Type

/** The API key as created: the only time its secret is shown. */
export const ApiKeyWithSecret = Schema.Struct({ ...ApiKey.fields, secret: Schema.String }).annotations({
  identifier: "ApiKeyWithSecret"
})
export type ApiKeyWithSecret = typeof ApiKeyWithSecret.Type

/**
 * The rights a key may hold beside its role and programs, each a boolean field of ApiKey. A key
 * grants, lists and revokes only keys whose rights it holds too (docs/api.md#authentication-and-roles).
 */
export const KEY_RIGHTS = ["pan_reveal", "card_display", "inbound_funding", "network"] as const satisfies ReadonlyArray<keyof ApiKey>
export type KeyRight = (typeof KEY_RIGHTS)[number]

/**
 * The keys an admin key may list and revoke: keys limited to some of `programIds` (null: any
 * key, unlimited ones included) holding none of `withoutRights`.
 */
export interface KeyScope {
  readonly programIds: ReadonlyArray<string> | null
  readonly withoutRights: ReadonlyArray<KeyRight>
}

/** The authenticated caller of a request. */
export interface Caller {
  readonly apiKeyId: string
  readonly organizationId: string
  readonly role: Role
  readonly programIds: ReadonlyArray<string> | null
  readonly panReveal: boolean
  /** May create card embed sessions (docs/card-data.md#embed-sessions-and-the-embed-document). */
  readonly cardDisplay: boolean
  /**
   * May record inbound external-rail transfers in production (docs/decisions.md, "Inbound
   * funding"); never held by an OAuth access token.
   */
  readonly inboundFunding: boolean
  /**
   * May send card network messages and rail outcomes (/v1/network/*, docs/network.md); never held
   * by an OAuth access token.
   */
  readonly network: boolean
  /**
   * Set when the caller is an OAuth access token rather than an API key (docs/oauth.md#access-tokens-on-v1):
   * `apiKeyId` then holds the grant's id (its rate limit and audit identity).
   */
  readonly oauth?: OAuthCaller | undefined
}

/** What an OAuth access token brings to a request: its grant, client, scopes and end of life. */
export interface OAuthCaller {
  readonly grantId: string
  readonly oauthClientId: string
  readonly scopes: ReadonlyArray<"read" | "write" | "pan_reveal">
  readonly expiresAtMs: number
}

/** How an error message names the caller: "This API key" or, for an OAuth access token, "This access token". */
export const callerNoun = (caller: Caller): string => (caller.oauth === undefined ? "This API key" : "This access token")

/** A caller acting inside one program (X-Program-ID resolved and checked). */
export interface ProgramCaller extends Caller {
  readonly program: Program
}

// ---- inputs, decoded once at the edge ---------------------------------------------------------

/** The name of a program or a key: not blank, at most MAX_NAME_LENGTH characters (kept as sent). */
export const DisplayName = Schema.String.pipe(
  Schema.filter((text) => text.trim().length > 0 || "must not be empty"),
  Schema.maxLength(MAX_NAME_LENGTH)
).annotations({ description: `A name for people to read, 1 to ${MAX_NAME_LENGTH} characters.` })

/** A BIN: the 6 to 8 leading digits of every card number of a program. */
export const Bin = Schema.String.pipe(Schema.pattern(/^\d{6,8}$/, { message: () => "must be 6 to 8 digits" }))

/** POST /v1/programs. */
export const CreateProgram = Schema.Struct({
  name: DisplayName,
  bin: Schema.optional(Bin.annotations({ description: `${ABOUT.bin} Default 400000.` }))
})
export type CreateProgram = typeof CreateProgram.Type

/** PATCH /v1/programs/{program_id} (admin): a field left out is kept. */
export const UpdateProgram = Schema.Struct({
  require_verified_cardholder: Schema.optional(Schema.Boolean.annotations({ description: ABOUT.require_verified_cardholder }))
}).annotations({ identifier: "UpdateProgram" })
export type UpdateProgram = typeof UpdateProgram.Type

/**
 * The programs a new key is limited to: 1 to MAX_PROGRAM_IDS program UUIDs, decoded to lower case
 * without duplicates. Every failure but an entry that is not text names the whole list.
 */
const ProgramIds = Schema.transform(
  Schema.Array(Schema.String).pipe(
    Schema.minItems(1, { message: () => "must name at least one program (or be null for every program)" }),
    Schema.maxItems(MAX_PROGRAM_IDS, { message: () => `may name at most ${MAX_PROGRAM_IDS} programs` }),
    Schema.filter((ids) => ids.every(isUuid) || "must hold program UUIDs")
  ),
  Schema.typeSchema(Schema.Array(Schema.String)),
  { strict: true, decode: (ids) => [...new Set(ids.map((id) => id.toLowerCase()))], encode: (ids) => ids }
)

/**
 * POST /v1/api-keys: program_ids absent or null means every program of the organization;
 * card_display absent means true for admin and developer keys the caller could grant it to.
 */
export const CreateApiKey = Schema.Struct({
  name: DisplayName,
  role: Role,
  program_ids: Schema.optional(Schema.NullOr(ProgramIds).annotations({ description: `${ABOUT.program_ids} 1 to ${MAX_PROGRAM_IDS} ids.` })),
  pan_reveal: Schema.optional(Schema.Boolean.annotations({ description: `${ABOUT.pan_reveal} Default false.` })),
  card_display: Schema.optional(
    Schema.Boolean.annotations({ description: `${ABOUT.card_display} Default true for admin and developer keys when the caller holds it.` })
  ),
  inbound_funding: Schema.optional(Schema.Boolean.annotations({ description: `${ABOUT.inbound_funding} Default false.` })),
  network: Schema.optional(Schema.Boolean.annotations({ description: `${ABOUT.network} Default false.` }))
})
export type CreateApiKey = typeof CreateApiKey.Type
