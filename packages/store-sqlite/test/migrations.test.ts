import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import * as Migrator from "@effect/sql/Migrator"
import * as SqliteStore from "@issuing/store-sqlite"
import {
  cardSpendTriggerSteps,
  countingWritesCheck,
  expectedListCounts,
  checkCardSpendFixture,
  checkSpendTotalsFixture,
  spendTotalsTriggerSteps,
  insertCardSpendFixture,
  maintainedListCounts
} from "@issuing/core/testing"
import { Effect } from "effect"
import { migrations } from "../src/migrations/index.js"

/**
 * Before/after checks of each SQLite migration (docs/architecture.md#migrations), the same harness
 * as store-pg's migrations.test.ts: one database migrated one migration at a time, `before` on the
 * database just short of the migration (seeding what it transforms), `after` right after it. The
 * SQLite posting is TypeScript (SqlitePosting.ts), so only data and triggers are checked here; a
 * migration that only adds tables, columns or indexes says "schema only" (schema/current.sql).
 */

interface MigrationCheck {
  /** On the database migrated up to just before the migration. */
  readonly before?: Effect.Effect<void, unknown, SqlClient.SqlClient>
  /** Right after the migration. */
  readonly after: Effect.Effect<void, unknown, SqlClient.SqlClient>
}

const NOW = "2026-01-01T00:00:00.000Z"

/** The message of a statement's failure. */
const failureOf = <A, E, R>(statement: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(statement), (error) => String((error as { cause?: unknown }).cause ?? error))

/**
 * Every migration, in order, with its checks or "schema only". A new migration must be added here
 * (a test below fails otherwise): with `before`/`after` when it changes data or adds triggers.
 */
const checks: Record<keyof typeof migrations, MigrationCheck | "schema only"> = {
  "0001_access": "schema only",
  "0002_idempotency": "schema only",
  "0003_events": "schema only",
  "0010_ledger": {
    before: Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all([
        sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('org_1', 'Org', ${NOW})`,
        sql`INSERT INTO issuing_programs (id, organization_id, name, bin, created_at, updated_at)
            VALUES ('program_1', 'org_1', 'Program', '400000', ${NOW}, ${NOW})`
      ])
    ),
    // Book transfers and entries are immutable: triggers refuse UPDATE and DELETE.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                 VALUES ('fa_1', 'program_1', NULL, 'settlement', 'USD', ${NOW})`
      yield* sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, created_at, updated_at)
                 VALUES ('txn_1', 'program_1', 'SETTLED', 100, 'USD', ${NOW}, ${NOW})`
      yield* sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
                   from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
                 VALUES ('tr_1', 'program_1', 'txn_1', 'book', 100, 'USD', 'fa_1', 'fa_1', 'SETTLED', ${NOW}, ${NOW})`
      yield* sql`INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
                 VALUES ('bt_1', 'program_1', 'tr_1', 'txn_1', 100, 'USD', ${NOW})`
      yield* sql`INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
                 VALUES ('bt_1', 0, 'fa_1', 'principal', 'DEBIT', 100, 'USD'), ('bt_1', 1, 'fa_1', 'principal', 'CREDIT', 100, 'USD')`
      for (const statement of [
        sql`UPDATE issuing_book_entries SET amount_minor = 1 WHERE book_transfer_id = 'bt_1'`,
        sql`DELETE FROM issuing_book_entries WHERE book_transfer_id = 'bt_1'`,
        sql`UPDATE issuing_book_transfers SET amount_minor = 1 WHERE id = 'bt_1'`,
        sql`DELETE FROM issuing_book_transfers WHERE id = 'bt_1'`
      ]) {
        expect(yield* failureOf(statement)).toContain("immutable")
      }
      expect(yield* sql`SELECT count(*) AS n FROM issuing_book_entries`).toEqual([{ n: 2 }])
    })
  },
  "0020_cards": "schema only",
  "0030_webhooks": "schema only",
  "0050_card_display": {
    // Seeds a key of each role and an audit record from before the columns existed.
    before: Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all([
        ...(["admin", "developer", "viewer"] as const).map(
          (role) => sql`INSERT INTO issuing_api_keys (id, organization_id, name, role, pan_reveal, secret_hash, created_at)
                        VALUES (${`key_${role}`}, 'org_1', ${role}, ${role}, 0, ${`hash_${role}`}, ${NOW})`
        ),
        sql`INSERT INTO issuing_card_audit_records (id, program_id, api_key_id, card_id, action, request_id, created_at)
            VALUES ('audit_1', 'program_1', 'key_admin', NULL, 'search_by_pan', 'req_1', ${NOW})`
      ])
    ),
    // Existing admin and developer keys may display cards, viewers may not; old records have no IP.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT role, card_display FROM issuing_api_keys ORDER BY role`).toEqual([
        { role: "admin", card_display: 1 },
        { role: "developer", card_display: 1 },
        { role: "viewer", card_display: 0 }
      ])
      expect(yield* sql`SELECT client_ip FROM issuing_card_audit_records`).toEqual([{ client_ip: null }])
    })
  },
  "0060_changes": {
    // The change feed's one version row, at 0; no second row.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT id, version FROM issuing_changes`).toEqual([{ id: 1, version: 0 }])
      expect(yield* failureOf(sql`INSERT INTO issuing_changes (id, version) VALUES (2, 0)`)).toContain("CHECK constraint failed")
    })
  },
  "0070_oauth": "schema only",
  "0120_inbound_funding": {
    // A second, later admin key of org_1 beside its seeded first one, and another organization's admin key.
    before: Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all([
        sql`INSERT INTO issuing_api_keys (id, organization_id, name, role, pan_reveal, secret_hash, created_at)
            VALUES ('key_admin_later', 'org_1', 'later', 'admin', 0, 'hash_admin_later', '2026-02-01T00:00:00.000Z')`,
        sql`INSERT INTO issuing_organizations (id, name, created_at) VALUES ('org_2', 'Other', ${NOW})`,
        sql`INSERT INTO issuing_api_keys (id, organization_id, name, role, pan_reveal, secret_hash, created_at)
            VALUES ('key_other_org', 'org_2', 'other', 'admin', 0, 'hash_other_org', ${NOW})`
      ])
    ),
    // Only each organization's first admin key holds the right.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT id FROM issuing_api_keys WHERE inbound_funding = 1 ORDER BY id`).toEqual([
        { id: "key_admin" },
        { id: "key_other_org" }
      ])
    })
  },
  "0130_grant_consenting_key": "schema only",
  "0140_interactions_by_client": "schema only",
  "0200_list_indexes": "schema only",
  "0210_list_counts": {
    // Rows of every counted list written before the counts existed: the backfill counts them.
    before: Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all([
        sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
            VALUES ('fa_2', 'program_1', 'wallet_1', 'wallet', 'USD', ${NOW})`,
        sql`INSERT INTO issuing_wallets (id, program_id, holder_name, holder_email, financial_account_id, created_at, updated_at)
            VALUES ('wallet_1', 'program_1', 'Ada', NULL, 'fa_2', ${NOW}, ${NOW})`,
        sql`INSERT INTO issuing_cards (id, program_id, wallet_id, financial_account_id, type, state, last_four, exp_month, exp_year,
              pan_sealed, cvv_sealed, pan_fingerprint, vault_key_id, allowed_mcc_codes, blocked_mcc_codes, created_at, updated_at)
            VALUES ('card_1', 'program_1', 'wallet_1', 'fa_2', 'VIRTUAL', 'ACTIVE', '4242', 1, 2030, 'p', 'c', 'fp_1', 'k', '[]', '[]', ${NOW}, ${NOW})`,
        sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, created_at, updated_at)
            VALUES ('txn_2', 'program_1', 'PENDING', 50, 'USD', 'card_1', ${NOW}, ${NOW})`,
        sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
              from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
            VALUES ('tr_2', 'program_1', 'txn_2', 'ach_same_day', 50, 'USD', 'fa_1', 'fa_2', 'PENDING', ${NOW}, ${NOW})`,
        sql`INSERT INTO issuing_events (id, program_id, type, created_at, data)
            VALUES ('evt_1', 'program_1', 'transfer.created', ${NOW}, '{}'), ('evt_2', 'program_1', 'card.created', ${NOW}, '{}')`,
        sql`INSERT INTO issuing_webhook_attempts (id, program_id, event_id, subscription_id, status, response_code, response_body,
              attempted_at, created_at, updated_at)
            VALUES ('att_1', 'program_1', 'evt_1', 'whs_1', 'failed', 500, '', ${NOW}, ${NOW}, ${NOW})`
      ])
    ),
    // The backfill equals a count of the rows; then the triggers keep it through inserts,
    // status and state changes, a book transfer's entries and a delete.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const counts = yield* maintainedListCounts
      expect(counts).toEqual(yield* expectedListCounts)
      expect(counts.filter((c) => c.key.replaceAll("|", "") === "").map((c) => [c.list, c.n])).toEqual([
        ["book_transfers", 1],
        ["card_audit_records", 1],
        ["cards", 1],
        ["events", 2],
        ["financial_accounts", 2],
        ["transactions", 2],
        ["transfers", 2],
        ["wallets", 1],
        ["webhook_attempts", 1]
      ])
      yield* sql`UPDATE issuing_transfers SET status = 'SETTLED', updated_at = ${NOW} WHERE id = 'tr_2'`
      yield* sql`UPDATE issuing_transactions SET status = 'SETTLED' WHERE id = 'txn_2'`
      yield* sql`UPDATE issuing_cards SET state = 'FROZEN' WHERE id = 'card_1'`
      yield* sql`INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
                 VALUES ('bt_2', 'program_1', 'tr_2', 'txn_2', 50, 'USD', ${NOW})`
      yield* sql`INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
                 VALUES ('bt_2', 0, 'fa_1', 'principal', 'DEBIT', 50, 'USD'), ('bt_2', 1, 'fa_1', 'cash', 'CREDIT', 50, 'USD'),
                        ('bt_2', 2, 'fa_2', 'cash', 'DEBIT', 50, 'USD'), ('bt_2', 3, 'fa_2', 'principal', 'CREDIT', 50, 'USD')`
      yield* sql`DELETE FROM issuing_events WHERE id = 'evt_2'`
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      expect(
        yield* sql`SELECT SUM(n) AS n FROM issuing_list_counts WHERE list = 'transfers' AND key = '=SETTLED|=ach_same_day|=fa_2'`
      ).toEqual([{ n: 1 }])
    })
  },
  "0230_card_holds": {
    // Card authorizations of before: one approved and posted at once, one declined.
    before: Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all([
        sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, mcc, created_at, updated_at)
            VALUES ('txn_card', 'program_1', 'APPROVED', 70, 'USD', 'card_1', '5411', ${NOW}, ${NOW})`,
        sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, decline_reason, mcc, created_at, updated_at)
            VALUES ('txn_declined', 'program_1', 'DECLINED', 90, 'USD', 'card_1', 'MCC_BLOCKED', '7995', ${NOW}, ${NOW})`,
        sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
              from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
            VALUES ('tr_card', 'program_1', 'txn_card', 'card', 70, 'USD', 'fa_2', 'fa_1', 'SETTLED', ${NOW}, ${NOW})`
      ])
    ),
    // They become single-message authorizations with their one card event; the status column keeps
    // its indexes and count triggers (the counts stay exact through the change and after it); the
    // new CHECK refuses an unknown status and a negative pending amount.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT id, status, authorized_minor, pending_minor, settled_minor, financial_account_id, card_events
                              FROM issuing_transactions WHERE id IN ('txn_card', 'txn_declined') ORDER BY id`
      expect(rows.map((row: any) => ({ ...row, card_events: JSON.parse(row.card_events) }))).toEqual([
        {
          id: "txn_card",
          status: "SETTLED",
          authorized_minor: 70,
          pending_minor: 0,
          settled_minor: 70,
          financial_account_id: "fa_2",
          card_events: [
            { id: "tr_card", type: "FINANCIAL_AUTHORIZATION", amount: 70, result: "APPROVED", decline_reason: null, created_at: NOW }
          ]
        },
        {
          id: "txn_declined",
          status: "DECLINED",
          authorized_minor: 90,
          pending_minor: 0,
          settled_minor: 0,
          financial_account_id: null,
          card_events: [
            { id: "txn_declined", type: "AUTHORIZATION", amount: 90, result: "DECLINED", decline_reason: "MCC_BLOCKED", created_at: NOW }
          ]
        }
      ])
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      const indexes = yield* sql<{ name: string }>`SELECT name FROM sqlite_master
        WHERE tbl_name = 'issuing_transactions' AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY name`
      expect(indexes.map((row) => row.name)).toEqual([
        "issuing_count_transactions_delete",
        "issuing_count_transactions_insert",
        "issuing_count_transactions_update",
        "issuing_transactions_by_amount",
        "issuing_transactions_by_card",
        "issuing_transactions_by_program",
        "issuing_transactions_by_status",
        "issuing_transactions_by_update",
        "issuing_transactions_holds_by_expiry"
      ])
      yield* sql`UPDATE issuing_transactions SET status = 'VOIDED' WHERE id = 'txn_card'`
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      expect(yield* failureOf(sql`UPDATE issuing_transactions SET status = 'LOST' WHERE id = 'txn_card'`)).toContain("CHECK")
      expect(
        yield* failureOf(sql`INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, pending_minor,
                               updated_at) VALUES ('fa_2', 'principal', 'USD', 0, 0, -1, ${NOW})`)
      ).toContain("CHECK")
    })
  },
  "0240_authorization_endpoints": "schema only",
  "0250_rate_buckets": "schema only",
  "0260_idempotency_claim_token": "schema only",
  "0270_metadata": {
    // A wallet, a card and a subscription of before, beside the transfers earlier steps wrote.
    before: Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all([
        sql`INSERT INTO issuing_wallets (id, program_id, holder_name, holder_email, financial_account_id, created_at, updated_at)
            VALUES ('wallet_meta', 'program_1', 'Ada', NULL, 'fa_1', ${NOW}, ${NOW})`,
        sql`INSERT INTO issuing_cards (id, program_id, wallet_id, financial_account_id, type, state, last_four, exp_month, exp_year,
              pan_sealed, cvv_sealed, pan_fingerprint, vault_key_id, allowed_mcc_codes, blocked_mcc_codes, created_at, updated_at)
            VALUES ('card_meta', 'program_1', 'wallet_meta', 'fa_1', 'VIRTUAL', 'ACTIVE', '4242', 7, 2031, 'p', 'c', 'fp_meta', 'k1', '[]', '[]',
                    ${NOW}, ${NOW})`,
        sql`INSERT INTO issuing_webhook_subscriptions (id, program_id, url, description, event_types, disabled, secret_sealed,
              created_at, updated_at)
            VALUES ('whs_meta', 'program_1', 'https://example.com/hook', '', '["card.created"]', 0, 's', ${NOW}, ${NOW})`
      ])
    ),
    // Every row of before reads {}; a row written without the column gets {}; NULL is refused.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      for (const table of ["issuing_wallets", "issuing_cards", "issuing_transfers", "issuing_webhook_subscriptions"]) {
        const rows = yield* sql.unsafe<{ metadata: string }>(`SELECT metadata FROM ${table}`)
        expect(rows.length, table).toBeGreaterThan(0)
        expect(new Set(rows.map((row) => row.metadata)), table).toEqual(new Set(["{}"]))
      }
      yield* sql`INSERT INTO issuing_webhook_subscriptions (id, program_id, url, description, event_types, disabled, secret_sealed,
                   created_at, updated_at)
                 VALUES ('whs_2', 'program_1', 'https://example.com/hook', '', '["card.created"]', 0, 's', ${NOW}, ${NOW})`
      expect(yield* sql`SELECT metadata FROM issuing_webhook_subscriptions WHERE id = 'whs_2'`).toEqual([{ metadata: "{}" }])
      expect(yield* failureOf(sql`UPDATE issuing_wallets SET metadata = NULL WHERE id = 'wallet_meta'`)).toContain("NOT NULL")
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
    })
  },
  "0280_webhook_portal": "schema only",
  "0300_settlement_slots": {
    // The balances of before: a settlement account's and a wallet's.
    before: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                 VALUES ('fa_settlement_slots', 'program_1', NULL, 'settlement', 'EUR', ${NOW})`
      yield* sql`INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, pending_minor, updated_at)
                 VALUES ('fa_settlement_slots', 'principal', 'EUR', 1500, 250, 0, ${NOW}), ('fa_settlement_slots', 'cash', 'EUR', 250, 1500, 0, ${NOW}),
                        ('fa_1', 'principal', 'USD', 0, 1250, 40, ${NOW})
                 ON CONFLICT (financial_account_id, book) DO NOTHING`
      balancesBeforeSlots = yield* sql`SELECT * FROM issuing_balances ORDER BY financial_account_id, book`
      expect(balancesBeforeSlots.length).toBeGreaterThanOrEqual(2)
    }),
    // Every row as it was, in slot 0; one writer keeps every row there.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT * FROM issuing_balances ORDER BY financial_account_id, book`
      expect(rows).toEqual(balancesBeforeSlots.map((row: any) => ({ ...row, slot: 0 })))
      expect(yield* failureOf(sql`UPDATE issuing_balances SET slot = 1`)).toContain("CHECK")
    })
  },
  "0310_entries_posted_at": {
    before: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      entriesBefore0310 = yield* sql`SELECT * FROM issuing_book_entries ORDER BY book_transfer_id, position`
      expect(entriesBefore0310.length).toBeGreaterThanOrEqual(6)
    }),
    // The table rebuilt: every entry as it was with its book transfer's posted_at, NOT NULL; the
    // index in the list's order; the triggers kept (immutable, counted on insert).
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const entries = yield* sql`SELECT e.*, bt.posted_at AS expected FROM issuing_book_entries e
                                 JOIN issuing_book_transfers bt ON bt.id = e.book_transfer_id ORDER BY e.book_transfer_id, e.position`
      expect(entries.map(({ posted_at, expected, ...rest }: any) => rest)).toEqual(entriesBefore0310)
      for (const row of entries as ReadonlyArray<any>) expect(row.posted_at).toBe(row.expected)
      expect(
        yield* sql`SELECT sql FROM sqlite_master WHERE name = 'issuing_book_entries_by_account'`.pipe(
          Effect.map((rows: any) => rows[0].sql)
        )
      ).toContain("(financial_account_id, book, posted_at, book_transfer_id)")
      expect(yield* failureOf(sql`UPDATE issuing_book_entries SET amount_minor = 1 WHERE book_transfer_id = 'bt_1'`)).toContain("immutable")
      expect(yield* failureOf(sql`DELETE FROM issuing_book_entries WHERE book_transfer_id = 'bt_1'`)).toContain("immutable")
      yield* sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, created_at, updated_at)
                 VALUES ('txn_310', 'program_1', 'SETTLED', 30, 'USD', ${NOW}, ${NOW})`
      yield* sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
                   from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
                 VALUES ('tr_310', 'program_1', 'txn_310', 'book', 30, 'USD', 'fa_1', 'fa_2', 'SETTLED', ${NOW}, ${NOW})`
      yield* sql`INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
                 VALUES ('bt_310', 'program_1', 'tr_310', 'txn_310', 30, 'USD', ${NOW})`
      const counted = sql`SELECT COALESCE(SUM(n), 0) AS n FROM issuing_list_counts WHERE list = 'book_transfers' AND key = '=fa_2|'`
      const [before] = yield* counted
      expect(
        yield* failureOf(sql`INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency)
                             VALUES ('bt_310', 0, 'fa_1', 'principal', 'DEBIT', 30, 'USD')`)
      ).toContain("NOT NULL")
      yield* sql`INSERT INTO issuing_book_entries (book_transfer_id, position, financial_account_id, book, entry_type, amount_minor, currency, posted_at)
                 VALUES ('bt_310', 0, 'fa_1', 'principal', 'DEBIT', 30, 'USD', ${NOW}), ('bt_310', 1, 'fa_2', 'principal', 'CREDIT', 30, 'USD', ${NOW})`
      const [after] = yield* counted
      expect(Number((after as any).n)).toBe(Number((before as any).n) + 1)
    })
  },
  "0330_transfer_list_indexes": {
    // Built over the transfers already there: an account's transfers found through each side's index.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const plan = (query: string) =>
        sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${query}`).pipe(Effect.map((rows) => rows.map((row) => row.detail).join(" | ")))
      expect(
        yield* plan("SELECT id FROM issuing_transfers WHERE from_financial_account_id = 'fa_1' ORDER BY created_at DESC, id DESC")
      ).toContain("issuing_transfers_by_from")
      expect(
        yield* plan("SELECT id FROM issuing_transfers WHERE to_financial_account_id = 'fa_2' ORDER BY created_at DESC, id DESC")
      ).toContain("issuing_transfers_by_to")
      const [viaIndex] =
        yield* sql`SELECT count(*) AS n FROM issuing_transfers INDEXED BY issuing_transfers_by_to WHERE to_financial_account_id = 'fa_2'`
      const [viaTable] = yield* sql`SELECT count(*) AS n FROM issuing_transfers NOT INDEXED WHERE to_financial_account_id = 'fa_2'`
      expect((viaTable as any).n).toBeGreaterThan(0)
      expect(viaIndex).toEqual(viaTable)
    })
  },
  "0340_account_list_indexes": "schema only",
  "0360_account_entry_indexes": "schema only",
  "0380_card_spend": {
    // Card transactions of before (insertCardSpendFixture: two cards either side of a UTC midnight).
    before: insertCardSpendFixture("program_1"),
    // Backfilled: per card and UTC day, and all time; then every kind of write keeps it exact.
    after: Effect.gen(function* () {
      yield* checkCardSpendFixture
      yield* cardSpendTriggerSteps("program_1")
    })
  },
  "0400_list_combination_indexes": "schema only",
  "0410_card_and_attempt_list_indexes": "schema only",
  "0411_account_update_order": {
    // Balance rows of before, of accounts of the program.
    before: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT count(*) AS n FROM issuing_balances WHERE book = 'principal'`).toEqual([{ n: expect.any(Number) }])
      const [{ n }] = (yield* sql`SELECT count(DISTINCT financial_account_id) AS n FROM issuing_balances WHERE book = 'principal'`) as any
      expect(n).toBeGreaterThanOrEqual(2)
    }),
    // Every row has its account's program; the program's principal rows are its accounts, each
    // once, read through the new index in updated_at order; a posting's balance upsert moves its
    // account to the front of that order.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const wrong = yield* sql`SELECT b.financial_account_id FROM issuing_balances b
                               JOIN issuing_financial_accounts a ON a.id = b.financial_account_id
                               WHERE b.program_id IS NOT a.program_id`
      expect(wrong).toEqual([])
      const byUpdate = sql`SELECT financial_account_id FROM issuing_balances
                           WHERE program_id = 'program_1' AND book = 'principal' AND slot = 0
                           ORDER BY updated_at DESC, financial_account_id DESC`
      const accounts = yield* sql`SELECT DISTINCT a.id FROM issuing_financial_accounts a
                                  JOIN issuing_balances b ON b.financial_account_id = a.id AND b.book = 'principal'
                                  WHERE a.program_id = 'program_1' ORDER BY a.id`
      const listed = (yield* byUpdate).map((row: any) => row.financial_account_id)
      expect([...listed].sort()).toEqual(accounts.map((row: any) => row.id))
      const [plan] = yield* sql`EXPLAIN QUERY PLAN SELECT financial_account_id FROM issuing_balances
                                WHERE program_id = 'program_1' AND book = 'principal' AND slot = 0
                                ORDER BY updated_at DESC, financial_account_id DESC`
      expect((plan as any).detail).toContain("issuing_balances_principal_by_update (program_id=?)")
      const last = listed.at(-1)
      yield* sql`INSERT INTO issuing_balances (financial_account_id, book, currency, debits_minor, credits_minor, pending_minor, updated_at)
                 VALUES (${last}, 'principal', 'USD', 0, 1, 0, '2026-02-01T00:00:00.000Z')
                 ON CONFLICT (financial_account_id, book) DO UPDATE SET
                   credits_minor = issuing_balances.credits_minor + excluded.credits_minor, updated_at = excluded.updated_at`
      expect((yield* byUpdate).map((row: any) => row.financial_account_id)).toEqual([last, ...listed.slice(0, -1)])
    })
  },
  "0412_live_grants_index": "schema only",
  "0450_walks_as_ranges": "schema only",
  // Wallets are counted by tag too (key `=tag` beside ''): a tagged insert counts both, a re-tag
  // moves one from the old tag's key to the new one's, an update that keeps the tag moves nothing,
  // a delete takes it back; the counts stay what the rows call for. Every tag is cleared after.
  "0480_wallet_tags": {
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const tagged = Effect.map(
        sql<{ key: string; n: number }>`SELECT key, SUM(n) AS n FROM issuing_list_counts
          WHERE list = 'wallets' AND program_id = 'program_1' AND key <> '' GROUP BY key HAVING SUM(n) <> 0 ORDER BY key`,
        (rows) => Object.fromEntries(rows.map((row) => [row.key, Number(row.n)]))
      )
      yield* sql`INSERT INTO issuing_financial_accounts (id, program_id, wallet_id, kind, currency, created_at)
                 VALUES ('fa_0480', 'program_1', 'wallet_0480', 'wallet', 'USD', ${NOW})`
      yield* sql`INSERT INTO issuing_wallets (id, program_id, holder_name, holder_email, financial_account_id, tag, created_at, updated_at)
                 VALUES ('wallet_0480', 'program_1', 'Erin', NULL, 'fa_0480', 'gold', ${NOW}, ${NOW})`
      yield* sql`UPDATE issuing_wallets SET tag = 'gold' WHERE id = 'wallet_1'`
      expect(yield* tagged).toEqual({ "=gold": 2 })
      yield* sql`UPDATE issuing_wallets SET tag = 'silver' WHERE id = 'wallet_0480'`
      expect(yield* tagged).toEqual({ "=gold": 1, "=silver": 1 })
      yield* sql`UPDATE issuing_wallets SET tag = tag, updated_at = ${NOW} WHERE tag IS NOT NULL`
      expect(yield* tagged).toEqual({ "=gold": 1, "=silver": 1 })
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      yield* sql`DELETE FROM issuing_wallets WHERE id = 'wallet_0480'`
      yield* sql`DELETE FROM issuing_financial_accounts WHERE id = 'fa_0480'`
      yield* sql`UPDATE issuing_wallets SET tag = NULL WHERE tag IS NOT NULL`
      expect(yield* tagged).toEqual({})
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
    })
  },
  // The triggers tag each event from its object: a wallet's own tag, wallet_id, a transfer's
  // accounts, a card transaction's card, a test event's subscription tag; an event naming no
  // tagged wallet gets none.
  "0490_event_tags": {
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE issuing_wallets SET tag = 'cust_ada' WHERE id = 'wallet_1'`
      const event = (id: string, type: string, data: unknown) =>
        sql`INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES (${id}, 'program_1', ${type}, ${NOW}, ${JSON.stringify(data)})`
      yield* event("evt_0490_card_txn", "transaction.updated", { id: "txn_x", card_id: "card_1" })
      yield* event("evt_0490_transfer", "transfer.created", {
        id: "tr_x",
        from_financial_account_id: "fa_2",
        to_financial_account_id: "fa_none"
      })
      yield* event("evt_0490_balance", "balance.updated", { id: "fa_2", wallet_id: "wallet_1" })
      yield* event("evt_0490_wallet", "wallet.updated", { id: "wallet_x", tag: "cust_new" })
      yield* event("evt_0490_test", "webhook.test", { id: "sub_x", tag: "cust_sub" })
      yield* event("evt_0490_grant", "oauth_grant.created", { id: "grant_x" })
      const tags = yield* sql<{ event_id: string; tag: string; created_at: string }>`
        SELECT event_id, tag, created_at FROM issuing_event_tags WHERE event_id LIKE 'evt_0490_%' ORDER BY event_id, tag`
      expect(tags).toEqual([
        { event_id: "evt_0490_balance", tag: "cust_ada", created_at: NOW },
        { event_id: "evt_0490_card_txn", tag: "cust_ada", created_at: NOW },
        { event_id: "evt_0490_test", tag: "cust_sub", created_at: NOW },
        { event_id: "evt_0490_transfer", tag: "cust_ada", created_at: NOW },
        { event_id: "evt_0490_wallet", tag: "cust_new", created_at: NOW }
      ])
      yield* sql`DELETE FROM issuing_events WHERE id LIKE 'evt_0490_%'`
      yield* sql`DELETE FROM issuing_event_tags WHERE event_id LIKE 'evt_0490_%'`
      yield* sql`UPDATE issuing_wallets SET tag = NULL WHERE id = 'wallet_1'`
    })
  },
  "0500_network_right": {
    // The keys 0120 seeded are still there: only each organization's first admin key holds the right.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT id FROM issuing_api_keys WHERE network = 1 ORDER BY id`).toEqual([
        { id: "key_admin" },
        { id: "key_other_org" }
      ])
    })
  },
  "0510_network_messages": {
    // An idempotency record from before the migration: it is kept 24 h from its creation.
    before: Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`INSERT INTO issuing_idempotency_keys (organization_id, idempotency_key, fingerprint, locked_at, created_at)
                   VALUES ('org_1', 'key_0510', 'fp', ${NOW}, ${NOW})`
    ),
    // Its expiry backfilled; a network transaction id is unique per program, not across programs.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT expires_at FROM issuing_idempotency_keys WHERE idempotency_key = 'key_0510'`).toEqual([
        { expires_at: "2026-01-02T00:00:00.000Z" }
      ])
      yield* sql`DELETE FROM issuing_idempotency_keys WHERE idempotency_key = 'key_0510'`
      yield* sql`INSERT INTO issuing_programs (id, organization_id, name, bin, created_at, updated_at)
                 VALUES ('program_0510', 'org_1', 'Other program', '400000', ${NOW}, ${NOW})`
      const insert = (id: string, program: string) =>
        sql`INSERT INTO issuing_transactions (id, program_id, status, amount_minor, currency, card_id, network_transaction_id,
              merchant, created_at, updated_at)
            VALUES (${id}, ${program}, 'PENDING', 100, 'USD', 'card_1', 'ntx_0510', '{"acceptor_id":"a"}', ${NOW}, ${NOW})`
      yield* insert("txn_0510_a", "program_1")
      yield* insert("txn_0510_b", "program_0510")
      expect(yield* failureOf(insert("txn_0510_c", "program_1"))).toContain("UNIQUE constraint failed")
      yield* sql`DELETE FROM issuing_transactions WHERE id IN ('txn_0510_a', 'txn_0510_b')`
      yield* sql`DELETE FROM issuing_programs WHERE id = 'program_0510'`
    })
  },
  "0550_transfer_returns": {
    // The transfers, their indexes and triggers and the counts they keep, as the rebuild finds them.
    before: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      transfersBefore0550 = yield* sql`SELECT * FROM issuing_transfers ORDER BY id`
      expect(transfersBefore0550.length).toBeGreaterThan(0)
      dependentsBefore0550 = yield* sql`SELECT type, name, sql FROM sqlite_schema
        WHERE tbl_name = 'issuing_transfers' AND type IN ('index', 'trigger') ORDER BY type, name`
      countsBefore0550 = yield* maintainedListCounts
    }),
    // The table rebuilt: every transfer as it was with no return; the same indexes and triggers,
    // the counts unmoved (the rows were copied back before the triggers were made again) and kept
    // on a change of status; RETURNED allowed, another status refused; the book transfers' foreign
    // key still holds.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT * FROM issuing_transfers ORDER BY id`).toEqual(
        transfersBefore0550.map((row: any) => ({ ...row, return_code: null, return_reason: null }))
      )
      expect(
        yield* sql`SELECT type, name, sql FROM sqlite_schema
          WHERE tbl_name = 'issuing_transfers' AND type IN ('index', 'trigger') ORDER BY type, name`
      ).toEqual(dependentsBefore0550)
      expect(yield* maintainedListCounts).toEqual(countsBefore0550)
      expect(yield* sql`PRAGMA foreign_key_check`).toEqual([])
      const [first] = transfersBefore0550 as ReadonlyArray<any>
      const returnedCount = sql`SELECT COALESCE(SUM(n), 0) AS n FROM issuing_list_counts WHERE list = 'transfers' AND key = '=RETURNED||'`
      yield* sql`UPDATE issuing_transfers SET status = 'RETURNED', return_code = 'R01', return_reason = 'why' WHERE id = ${first.id}`
      expect(yield* returnedCount).toEqual([{ n: 1 }])
      expect(yield* failureOf(sql`UPDATE issuing_transfers SET status = 'REVERSED' WHERE id = ${first.id}`)).toContain("CHECK")
      yield* sql`UPDATE issuing_transfers SET status = ${first.status}, return_code = NULL, return_reason = NULL WHERE id = ${first.id}`
      expect(yield* returnedCount).toEqual([{ n: 0 }])
      expect(
        yield* failureOf(sql`INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
                             VALUES ('bt_0550', 'program_1', 'no_such_transfer', ${first.transaction_id}, 1, 'USD', ${NOW})`)
      ).toContain("FOREIGN KEY")
    })
  },
  "0560_settlement_totals": {
    // The card transfers already posted counted once by kind, and a card transfer posted after it
    // counted by the trigger on its own UTC day; a transfer of another rail is not.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(
        yield* sql`SELECT program_id, day, currency, kind, count, amount_minor FROM issuing_settlement_totals ORDER BY program_id, day, kind`
      ).toEqual([{ program_id: "program_1", day: "2026-01-01", currency: "USD", kind: "clearing", count: 1, amount_minor: 70 }])
      const [template] = (yield* sql`SELECT * FROM issuing_transfers ORDER BY id LIMIT 1`) as ReadonlyArray<any>
      const insert = (id: string, rail: string) =>
        sql`INSERT INTO issuing_transfers (id, program_id, transaction_id, payment_rail, amount_minor, currency,
              from_financial_account_id, to_financial_account_id, status, created_at, updated_at)
            VALUES (${id}, ${template.program_id}, ${template.transaction_id}, ${rail}, 25, 'USD', ${template.from_financial_account_id},
              ${template.to_financial_account_id}, 'SETTLED', '2030-01-03T23:59:59.999Z', '2030-01-03T23:59:59.999Z')`
      yield* insert("tr_0560_card", "card")
      yield* insert("tr_0560_book", "book")
      yield* insert("tr_0560_card_2", "card")
      expect(
        yield* sql`SELECT day, sum(count) AS count, sum(amount_minor) AS amount_minor FROM issuing_settlement_totals
                        WHERE day = '2030-01-03' GROUP BY day`
      ).toEqual([{ day: "2030-01-03", count: 2, amount_minor: 50 }])
      yield* sql`DELETE FROM issuing_transfers WHERE id IN ('tr_0560_card', 'tr_0560_book', 'tr_0560_card_2')`
      yield* sql`DELETE FROM issuing_settlement_totals WHERE day = '2030-01-03'`
    })
  },
  "0690_disputes": {
    // Every transaction disputed by nothing yet (NULL, read as 0); a dispute row takes a known
    // reason and status, a positive amount and transfers that exist; the counts stay exact.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT COUNT(*) AS n FROM issuing_transactions WHERE disputed_minor IS NOT NULL`).toEqual([{ n: 0 }])
      const [template] = (yield* sql`SELECT * FROM issuing_transfers ORDER BY id LIMIT 1`) as ReadonlyArray<any>
      const insert = (id: string, fields: { amount?: number; reason?: string; status?: string; transfer?: string } = {}) =>
        sql`INSERT INTO issuing_disputes (id, program_id, transaction_id, amount_minor, currency, reason, explanation, status,
              provisional_credit_transfer_id, reversal_transfer_id, created_at, updated_at)
            VALUES (${id}, ${template.program_id}, ${template.transaction_id}, ${fields.amount ?? 10}, 'USD', ${fields.reason ?? "FRAUD"},
              NULL, ${fields.status ?? "SUBMITTED"}, ${fields.transfer ?? template.id}, NULL, ${NOW}, ${NOW})`
      yield* insert("dsp_0690")
      expect(yield* failureOf(insert("dsp_0690_a", { amount: 0 }))).toContain("CHECK")
      expect(yield* failureOf(insert("dsp_0690_b", { reason: "BORED" }))).toContain("CHECK")
      expect(yield* failureOf(insert("dsp_0690_c", { status: "OPEN" }))).toContain("CHECK")
      expect(yield* failureOf(insert("dsp_0690_d", { transfer: "no_such_transfer" }))).toContain("FOREIGN KEY")
      yield* sql`DELETE FROM issuing_disputes WHERE id = 'dsp_0690'`
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
    })
  },
  "0691_time_only_list_indexes": "schema only",
  "0695_wallet_holder_search": "schema only",
  "0699_card_last_four": "schema only",
  "0705_cardholders": {
    // Wallets, cards and programs keep their rows with no cardholder and no requirement; the new
    // list's count follows an insert, a verification, an email change and a delete.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT count(*) AS n FROM issuing_wallets WHERE cardholder_id IS NOT NULL`).toEqual([{ n: 0 }])
      expect(yield* sql`SELECT count(*) AS n FROM issuing_cards WHERE cardholder_id IS NOT NULL`).toEqual([{ n: 0 }])
      expect(yield* sql`SELECT DISTINCT require_verified_cardholder AS r FROM issuing_programs`).toEqual([{ r: 0 }])
      const [program] = (yield* sql`SELECT id FROM issuing_programs ORDER BY id LIMIT 1`) as ReadonlyArray<any>
      yield* sql`INSERT INTO issuing_cardholders (id, program_id, type, name, email, billing_address, status,
                   verification_updated_at, created_at, updated_at)
                 VALUES ('ch_0705', ${program.id}, 'individual', 'Ada', 'a@example.com', '{}', 'PENDING_VERIFICATION', ${NOW}, ${NOW}, ${NOW})`
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      yield* sql`UPDATE issuing_cardholders SET status = 'VERIFIED' WHERE id = 'ch_0705'`
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      yield* sql`UPDATE issuing_cardholders SET email = NULL WHERE id = 'ch_0705'`
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      yield* sql`DELETE FROM issuing_cardholders WHERE id = 'ch_0705'`
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
    })
  },
  "0710_card_merchant_countries": {
    // Every card issued before has neither list.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(
        yield* sql`SELECT count(*) AS n FROM issuing_cards WHERE allowed_merchant_countries <> '[]' OR blocked_merchant_countries <> '[]'`
      ).toEqual([{ n: 0 }])
    })
  },
  "0750_summed_counts": {
    // The money-movement lists recounted under their new keys (no "any" for status, rail, type or
    // book; a book transfer once per account under its set of books), then kept by the new
    // triggers through writes of every kind.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      expect(
        yield* sql`SELECT list, key FROM issuing_list_counts WHERE (list = 'events' AND key = '')
          OR (list IN ('transfers', 'transactions') AND key LIKE '|%') OR (list = 'book_transfers' AND key NOT LIKE '=%|=%')`
      ).toEqual([])
      yield* countingWritesCheck(NOW)
    })
  },
  "0751_card_spend_totals": {
    // A card with a spending period, one without.
    before: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE issuing_cards SET spending_interval = 'DAILY', spending_amount_minor = 500 WHERE id = 'card_1'`
    }),
    // The period is the card's one limit, the others have none; the totals are backfilled per card,
    // interval and window (0380's fixture among them), then every kind of write keeps them exact.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const cards = (yield* sql`SELECT id, spending_limits FROM issuing_cards`) as ReadonlyArray<any>
      for (const card of cards)
        expect(JSON.parse(card.spending_limits), card.id).toEqual(
          card.id === "card_1" ? [{ interval: "DAILY", amount: 500, count: null }] : []
        )
      expect(
        yield* sql`SELECT count(*) AS n FROM sqlite_master WHERE name LIKE 'issuing_card_spend' OR sql LIKE '%spending_interval%'`
      ).toEqual([{ n: 0 }])
      yield* checkSpendTotalsFixture
      yield* spendTotalsTriggerSteps("program_1")
    })
  },
  "0780_batch_counts": {
    // The insert triggers still count every writer's rows; a list named in issuing_posting_counted
    // (a batch counting its own rows) is not counted by them meanwhile.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* countingWritesCheck(NOW)
      const eventCounts = sql`SELECT coalesce(sum(n), 0) AS n FROM issuing_list_counts WHERE list = 'events'`
      const before = yield* eventCounts
      const [program] = (yield* sql`SELECT id FROM issuing_programs ORDER BY id LIMIT 1`) as ReadonlyArray<any>
      yield* sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`INSERT INTO issuing_posting_counted (list) VALUES ('events')`
            yield* sql`INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES ('evt_0780', ${program.id}, 'counted.check', ${NOW}, '{}')`
            expect(yield* eventCounts).toEqual(before)
            yield* sql`DELETE FROM issuing_posting_counted`
            yield* sql`INSERT INTO issuing_events (id, program_id, type, created_at, data) VALUES ('evt_0780_b', ${program.id}, 'counted.check', ${NOW}, '{}')`
            expect(yield* eventCounts).not.toEqual(before)
            return yield* Effect.fail("rolled back" as const)
          })
        )
        .pipe(
          Effect.catchIf(
            (error) => error === "rolled back",
            () => Effect.void
          )
        )
      expect(yield* eventCounts).toEqual(before)
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
    })
  },
  "0841_period_counts": {
    // The rows already written counted again per month, day and hour of their created_at; then the
    // triggers keep those counts through writes of every kind (a status change moves a row's periods).
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
      const periods = (yield* sql`SELECT DISTINCT substr(list, 1, instr(list, '@')) AS list FROM issuing_list_counts
        WHERE list LIKE '%@%' ORDER BY 1`) as ReadonlyArray<any>
      expect(periods.map((row) => row.list)).toEqual(["events@", "transactions@", "transfers@"])
      yield* countingWritesCheck(NOW)
    })
  },
  "0860_money_tables_without_rowid": {
    // The five tables' rows, indexes, triggers and counts, as the rebuild finds them.
    before: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      for (const table of TABLES_0860) {
        const rows = yield* sql.unsafe(`SELECT * FROM ${table} ORDER BY 1, 2`)
        expect(rows.length, table).toBeGreaterThan(0)
        rowsBefore0860.set(table, rows)
      }
      dependentsBefore0860 = yield* dependents0860
      countsBefore0860 = yield* maintainedListCounts
    }),
    // Rebuilt WITHOUT ROWID: the same rows, indexes and triggers, the counts unmoved; the foreign
    // keys and the entries' immutability still hold, and the triggers still count a new event.
    after: Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      for (const table of TABLES_0860) {
        expect(yield* sql.unsafe(`SELECT * FROM ${table} ORDER BY 1, 2`), table).toEqual(rowsBefore0860.get(table))
        const [created] = (yield* sql`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ${table}`) as ReadonlyArray<any>
        expect(created.sql, table).toMatch(/WITHOUT ROWID$/)
      }
      expect(yield* dependents0860).toEqual(dependentsBefore0860)
      expect(yield* maintainedListCounts).toEqual(countsBefore0860)
      expect(yield* sql`PRAGMA foreign_key_check`).toEqual([])
      const [entry] = rowsBefore0860.get("issuing_book_entries") as ReadonlyArray<any>
      expect(
        yield* failureOf(
          sql`UPDATE issuing_book_entries SET amount_minor = amount_minor + 1 WHERE book_transfer_id = ${entry.book_transfer_id}`
        )
      ).not.toBe("")
      expect(
        yield* failureOf(sql`INSERT INTO issuing_book_transfers (id, program_id, transfer_id, transaction_id, amount_minor, currency, posted_at)
                             VALUES ('bt_0860', 'program_1', 'no_such_transfer', 'no_such_transaction', 1, 'USD', ${NOW})`)
      ).toContain("FOREIGN KEY")
      yield* countingWritesCheck(NOW)
      expect(yield* maintainedListCounts).toEqual(yield* expectedListCounts)
    })
  }
}

/** The tables migration 0860 rebuilds, their rows, indexes and triggers, and the counts before it. */
const TABLES_0860 = ["issuing_transactions", "issuing_transfers", "issuing_book_transfers", "issuing_book_entries", "issuing_events"]
const rowsBefore0860 = new Map<string, ReadonlyArray<unknown>>()
let dependentsBefore0860: ReadonlyArray<unknown> = []
let countsBefore0860: unknown = null
const dependents0860 = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`SELECT type, name, tbl_name, sql FROM sqlite_schema
    WHERE ${sql.in("tbl_name", TABLES_0860)} AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY tbl_name, type, name`
)

/** The entries of before migration 0310. */
let entriesBefore0310: ReadonlyArray<unknown> = []

/** The transfers, their indexes and triggers and the maintained counts before migration 0550's rebuild. */
let transfersBefore0550: ReadonlyArray<unknown> = []
let dependentsBefore0550: ReadonlyArray<unknown> = []
let countsBefore0550: unknown = null

/** The balance rows of before migration 0300. */
let balancesBeforeSlots: ReadonlyArray<unknown> = []

/** The database migrated through `id` (and every migration before it). */
const migrateThrough = (id: string) =>
  Migrator.make({})({
    loader: Migrator.fromRecord(Object.fromEntries(Object.entries(migrations).filter(([other]) => other <= id))),
    table: "issuing_migrations"
  })

describe("SQLite migrations, each checked before and after", () => {
  it("lists every migration, in order, with its checks or as schema only", () => {
    expect(Object.keys(checks)).toEqual(Object.keys(migrations).sort())
  })

  it.effect("keep what each promised, one migration at a time", () =>
    Effect.gen(function* () {
      for (const [id, check] of Object.entries(checks)) {
        if (check !== "schema only" && check.before !== undefined) yield* check.before.pipe(naming(id, "before"))
        yield* migrateThrough(id)
        if (check !== "schema only") yield* check.after.pipe(naming(id, "after"))
      }
      // The step-by-step run ends where the store's own migration ends.
      expect(yield* SqliteStore.migrate).toEqual([])
    }).pipe(Effect.provide(SqliteStore.SqliteClient.layer({ filename: ":memory:" })))
  )
})

/** Says which migration's check failed (its assertion's own diff follows). */
const naming =
  (id: string, side: "before" | "after") =>
  <A, E, R>(check: Effect.Effect<A, E, R>) =>
    Effect.tapErrorCause(check, () => Effect.sync(() => console.error(`migration check failed: ${id} ${side}`)))
