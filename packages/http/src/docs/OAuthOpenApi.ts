/**
 * The OpenAPI description of the OAuth protocol endpoints (docs/oauth.md), written by hand: their
 * bodies are forms and their errors RFC 6749 §5.2 objects, which the HttpApi definition (JSON
 * bodies, the /v1 envelope) does not describe.
 */

const OAUTH_ERROR = {
  type: "object",
  required: ["error", "error_description"],
  properties: {
    error: {
      type: "string",
      description: "The RFC 6749 §5.2 error code.",
      enum: ["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope"]
    },
    error_description: { type: "string", description: "A sentence for a human saying what is wrong." }
  }
}

const TOKEN_RESPONSE = {
  type: "object",
  required: ["access_token", "token_type", "expires_in", "refresh_token", "scope"],
  properties: {
    access_token: { type: "string", description: "at_… (opaque; default 900 s)" },
    token_type: { type: "string", enum: ["Bearer"], description: "Always Bearer: send `Authorization: Bearer <access_token>`." },
    expires_in: { type: "integer", description: "Seconds until the access token expires." },
    refresh_token: { type: "string", description: "rt_… (opaque, single use; default 30 days)" },
    scope: { type: "string", description: "The scopes granted, space-separated." }
  }
}

const string = (description: string) => ({ type: "string", description })

const form = (properties: Record<string, unknown>, required: ReadonlyArray<string>) => ({
  required: true,
  content: { "application/x-www-form-urlencoded": { schema: { type: "object", required, properties } } }
})

const clientAuth = {
  client_id: string("public clients, or client_secret_post"),
  client_secret: string("client_secret_post (confidential clients); or send HTTP Basic")
}

const errors = {
  "400": { description: "OAuth error", content: { "application/json": { schema: OAUTH_ERROR } } },
  "401": { description: "invalid_client", content: { "application/json": { schema: OAUTH_ERROR } } }
}

const query = (name: string, description: string, required = true) => ({
  name,
  in: "query",
  required,
  schema: { type: "string" },
  description
})

/** Path items of /oauth/* and /.well-known/oauth-authorization-server. */
export const OAUTH_PATHS = {
  "/oauth/authorize": {
    get: {
      operationId: "oauth.authorize",
      summary: "Authorization request (RFC 6749 §4.1, PKCE S256 only, RFC 9207 iss)",
      tags: ["oauth"],
      security: [],
      parameters: [
        query("response_type", "code"),
        query("client_id", "the client's client_id"),
        query("redirect_uri", "exactly one of the client's redirect_uris"),
        query("scope", "space-separated: read, write, pan_reveal (default: the client's scopes)", false),
        query("state", "echoed on the redirect", false),
        query("code_challenge", "exactly 43 characters of base64url: BASE64URL(SHA-256(code_verifier))"),
        query("code_challenge_method", "S256")
      ],
      responses: {
        "302": {
          description:
            "To ISSUING_OAUTH_INTERACTION_URL?interaction=<id>, or back to redirect_uri with error, error_description, state, iss"
        },
        "400": { description: "HTML page: unknown client_id or unregistered redirect_uri (never a redirect)" }
      }
    }
  },
  "/oauth/token": {
    post: {
      operationId: "oauth.token",
      summary: "Token endpoint: authorization_code (with code_verifier) and refresh_token (rotating)",
      tags: ["oauth"],
      security: [],
      requestBody: form(
        {
          grant_type: {
            type: "string",
            enum: ["authorization_code", "refresh_token"],
            description: "authorization_code (with code and code_verifier) or refresh_token."
          },
          code: string("authorization_code: the code (60 s, single use)"),
          redirect_uri: string("authorization_code: the redirect_uri of the request"),
          code_verifier: string("authorization_code: 43–128 characters of [A-Za-z0-9-._~]"),
          refresh_token: string("refresh_token: the current refresh token"),
          scope: string("refresh_token: optional narrower scope"),
          ...clientAuth
        },
        ["grant_type"]
      ),
      responses: {
        "200": { description: "Tokens (Cache-Control: no-store)", content: { "application/json": { schema: TOKEN_RESPONSE } } },
        ...errors
      }
    }
  },
  "/oauth/revoke": {
    post: {
      operationId: "oauth.revoke",
      summary: "Token revocation (RFC 7009); a refresh token revokes its whole grant",
      tags: ["oauth"],
      security: [],
      requestBody: form({ token: string("access or refresh token"), token_type_hint: string("ignored"), ...clientAuth }, ["token"]),
      responses: { "200": { description: "Revoked, or unknown (the same answer)" }, ...errors }
    }
  },
  "/oauth/introspect": {
    post: {
      operationId: "oauth.introspect",
      summary: "Token introspection (RFC 7662), for the client's own tokens",
      tags: ["oauth"],
      security: [],
      requestBody: form({ token: string("access or refresh token"), ...clientAuth }, ["token"]),
      responses: {
        "200": {
          description: "{active: false} or {active: true, scope, client_id, token_type, exp, iat, iss, sub, program_ids}",
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["active"],
                properties: { active: { type: "boolean", description: "Whether the token is valid now." } }
              }
            }
          }
        },
        ...errors
      }
    }
  },
  "/.well-known/oauth-authorization-server": {
    get: {
      operationId: "oauth.metadata",
      summary: "Authorization server metadata (RFC 8414); issuer = ISSUING_BASE_URL",
      tags: ["oauth"],
      security: [],
      responses: { "200": { description: "Metadata", content: { "application/json": { schema: { type: "object" } } } } }
    }
  }
} as const
