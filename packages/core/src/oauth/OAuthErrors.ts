import { Data } from "effect"

/**
 * The error codes of the OAuth endpoints (RFC 6749 §4.1.2.1 and §5.2, RFC 7009): what a client
 * library parses from `{error, error_description}` or from the redirect's query.
 */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "access_denied"
  | "server_error"
  | "temporarily_unavailable"

/**
 * A refusal at an OAuth endpoint, told in OAuth's own terms (not the /v1 envelope). The
 * description never repeats a code, token or secret that was sent.
 */
export class OAuthProtocolError extends Data.TaggedError("OAuthProtocolError")<{
  readonly error: OAuthErrorCode
  readonly description: string
}> {}

/** Shorthand for a refusal. */
export const oauthError = (error: OAuthErrorCode, description: string) => new OAuthProtocolError({ error, description })
