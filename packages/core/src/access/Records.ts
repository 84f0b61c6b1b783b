/** Roles of CONTRACT §2: admin (everything), developer (program resources), viewer (read only). */
export type Role = "admin" | "developer" | "viewer"
export const ROLES: ReadonlyArray<Role> = ["admin", "developer", "viewer"]

/** An organization: the owner of programs and API keys. */
export interface Organization {
  readonly id: string
  readonly name: string
  readonly created_at: string
}

/** A card program (a BIN range) of an organization. */
export interface Program {
  readonly id: string
  readonly object: "program"
  readonly organization_id: string
  readonly name: string
  readonly bin: string
  readonly created_at: string
  readonly updated_at: string
}

/** An API key as stored: the secret itself is never kept, only its SHA-256 hash. */
export interface ApiKey {
  readonly id: string
  readonly object: "api_key"
  readonly organization_id: string
  readonly name: string
  readonly role: Role
  readonly program_ids: ReadonlyArray<string> | null
  readonly pan_reveal: boolean
  readonly created_at: string
  readonly revoked_at: string | null
}

/** An API key together with its secret, as returned once at creation. */
export interface ApiKeyWithSecret extends ApiKey {
  readonly secret: string
}

/** The authenticated caller of a request. */
export interface Caller {
  readonly apiKeyId: string
  readonly organizationId: string
  readonly role: Role
  readonly programIds: ReadonlyArray<string> | null
  readonly panReveal: boolean
}

/** A caller acting inside one program (X-Program-ID resolved and checked). */
export interface ProgramCaller extends Caller {
  readonly program: Program
}
