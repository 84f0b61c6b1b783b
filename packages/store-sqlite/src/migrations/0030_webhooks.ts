import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Webhooks: subscriptions, their event types (the fan-out index), the delivery queue and attempts. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_webhook_subscriptions (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL REFERENCES issuing_programs (id),
    url TEXT NOT NULL,
    description TEXT NOT NULL,
    event_types TEXT NOT NULL,
    disabled INTEGER NOT NULL,
    secret_sealed TEXT NOT NULL,
    previous_secret_sealed TEXT,
    previous_secret_expires_at TEXT,
    failing_since TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_webhook_subscriptions_by_program ON issuing_webhook_subscriptions (program_id, created_at, id)`
  yield* sql`CREATE TABLE issuing_webhook_event_types (
    program_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    subscription_id TEXT NOT NULL REFERENCES issuing_webhook_subscriptions (id) ON DELETE CASCADE,
    PRIMARY KEY (program_id, event_type, subscription_id)
  )`
  yield* sql`CREATE INDEX issuing_webhook_event_types_by_subscription ON issuing_webhook_event_types (subscription_id)`
  yield* sql`CREATE TABLE issuing_webhook_deliveries (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL,
    subscription_id TEXT NOT NULL REFERENCES issuing_webhook_subscriptions (id) ON DELETE CASCADE,
    event_id TEXT NOT NULL,
    attempt_count INTEGER NOT NULL,
    next_attempt_at TEXT NOT NULL,
    claim_token TEXT,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_webhook_deliveries_due ON issuing_webhook_deliveries (next_attempt_at)`
  yield* sql`CREATE INDEX issuing_webhook_deliveries_by_subscription ON issuing_webhook_deliveries (subscription_id)`
  yield* sql`CREATE TABLE issuing_webhook_attempts (
    id TEXT PRIMARY KEY,
    program_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    subscription_id TEXT NOT NULL,
    status TEXT NOT NULL,
    response_code INTEGER NOT NULL,
    response_body TEXT NOT NULL,
    attempted_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_program ON issuing_webhook_attempts (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_event ON issuing_webhook_attempts (program_id, event_id, created_at)`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_subscription ON issuing_webhook_attempts (program_id, subscription_id, created_at)`
})
