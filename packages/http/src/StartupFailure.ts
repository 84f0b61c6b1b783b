import { Cause, Runtime } from "effect"
import type { DatabaseTarget } from "./config.js"

/** Why PostgreSQL could not be used, by the code node-postgres or the network reports. */
const POSTGRES_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused: is PostgreSQL running and listening on that address and port?",
  ENOTFOUND: "host name not found",
  EAI_AGAIN: "host name lookup failed for now (DNS)",
  ETIMEDOUT: "no answer (timed out): a firewall, or the wrong address?",
  ECONNRESET: "the connection was reset (TLS required, or a proxy in between?)",
  EHOSTUNREACH: "host unreachable",
  "28P01": "password authentication failed",
  "28000": "the server refused this user or address (pg_hba.conf)",
  "3D000": "the database does not exist",
  "53300": "too many connections"
}

/** The innermost error that carries a `code`, through Effect's FiberFailure and `cause` chains. */
const coded = (error: unknown): { readonly code: string; readonly message: string } | undefined => {
  let current: unknown = Runtime.isFiberFailure(error) ? Cause.squash(error[Runtime.FiberFailureCauseId]) : error
  let found: { code: string; message: string } | undefined
  for (let depth = 0; depth < 10 && typeof current === "object" && current !== null; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown }
    if (typeof code === "string" && code !== "") found = { code, message: typeof message === "string" ? message : "" }
    current = (current as { cause?: unknown }).cause
  }
  return found
}

/** host:port/database of a PostgreSQL URL, never its credentials. */
const postgresAddress = (url: string) => {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname || "localhost"}:${parsed.port || "5432"}${parsed.pathname === "/" ? "" : parsed.pathname}`
  } catch {
    return "the configured address"
  }
}

/**
 * One line saying why a command failed. When the database is PostgreSQL and the failure is
 * reaching or logging into it, the line names the host (not the credentials) and the cause.
 */
export const describeFailure = (error: unknown, database: DatabaseTarget): string => {
  const fallback = error instanceof Error ? error.message : String(error)
  if (database.kind !== "postgres") return fallback
  const cause = coded(error)
  const reason = cause === undefined ? undefined : POSTGRES_REASONS[cause.code]
  if (cause === undefined || reason === undefined) return fallback
  return `cannot use PostgreSQL at ${postgresAddress(database.url)} (ISSUING_DATABASE_URL): ${reason} [${cause.code}]`
}
