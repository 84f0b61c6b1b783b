import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Webhooks: subscriptions, their event types (the fan-out index), the delivery queue and attempts. */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE issuing_webhook_subscriptions (
    id text PRIMARY KEY,
    program_id text NOT NULL REFERENCES issuing_programs (id),
    url text NOT NULL,
    description text NOT NULL,
    event_types text NOT NULL,
    disabled boolean NOT NULL,
    secret_sealed text NOT NULL,
    previous_secret_sealed text,
    previous_secret_expires_at timestamptz,
    failing_since timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_webhook_subscriptions_by_program ON issuing_webhook_subscriptions (program_id, created_at, id)`
  yield* sql`CREATE TABLE issuing_webhook_event_types (
    program_id text NOT NULL,
    event_type text NOT NULL,
    subscription_id text NOT NULL REFERENCES issuing_webhook_subscriptions (id) ON DELETE CASCADE,
    PRIMARY KEY (program_id, event_type, subscription_id)
  )`
  yield* sql`CREATE INDEX issuing_webhook_event_types_by_subscription ON issuing_webhook_event_types (subscription_id)`
  yield* sql`CREATE TABLE issuing_webhook_deliveries (
    id text PRIMARY KEY,
    program_id text NOT NULL,
    subscription_id text NOT NULL REFERENCES issuing_webhook_subscriptions (id) ON DELETE CASCADE,
    event_id text NOT NULL,
    attempt_count integer NOT NULL,
    next_attempt_at timestamptz NOT NULL,
    claim_token text,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_webhook_deliveries_due ON issuing_webhook_deliveries (next_attempt_at)`
  yield* sql`CREATE INDEX issuing_webhook_deliveries_by_subscription ON issuing_webhook_deliveries (subscription_id)`
  yield* sql`CREATE TABLE issuing_webhook_attempts (
    id text PRIMARY KEY,
    program_id text NOT NULL,
    event_id text NOT NULL,
    subscription_id text NOT NULL,
    status text NOT NULL,
    response_code integer NOT NULL,
    response_body text NOT NULL,
    attempted_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_program ON issuing_webhook_attempts (program_id, created_at, id)`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_event ON issuing_webhook_attempts (program_id, event_id, created_at)`
  yield* sql`CREATE INDEX issuing_webhook_attempts_by_subscription ON issuing_webhook_attempts (program_id, subscription_id, created_at)`
})
