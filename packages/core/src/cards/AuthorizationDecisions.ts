import type { SqlError } from "@effect/sql"
import { Effect, Option } from "effect"
import type { RequestHistoryEntry } from "../ledger/Records.js"
import type { Card } from "./Records.js"

// Interim: the real-time decisions (authorization endpoints, embedded deciders) are being built on
// their own branch; until they merge, no program is asked.

export interface AuthorizationRequest {
  readonly transaction: unknown
  readonly card: Card
  readonly amount: number
  readonly kind: "AUTHORIZATION" | "FINANCIAL_AUTHORIZATION" | "INCREMENTAL_AUTHORIZATION"
  readonly partial_approval_capable: boolean
}

export type DecisionRecord = RequestHistoryEntry

export interface Decision {
  readonly approved: boolean
  readonly amount: number
  readonly record: DecisionRecord
}

export class AuthorizationDecisions extends Effect.Service<AuthorizationDecisions>()("@issuing/core/AuthorizationDecisions", {
  succeed: {
    decide: (_programId: string, _request: AuthorizationRequest): Effect.Effect<Option.Option<Decision>, SqlError.SqlError> =>
      Effect.succeed(Option.none())
  }
}) {}
