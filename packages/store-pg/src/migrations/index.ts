import access from "./0001_access.js"
import idempotency from "./0002_idempotency.js"
import events from "./0003_events.js"
import webhooks from "./0030_webhooks.js"
import ledger from "./0010_ledger.js"
import ledgerPosting from "./0011_ledger_posting.js"
import ledgerPostTransfer from "./0040_ledger_post_transfer.js"
import cards from "./0020_cards.js"
import cardDisplay from "./0050_card_display.js"
import changes from "./0060_changes.js"
import oauth from "./0070_oauth.js"
import cardAuthorizationPosting from "./0080_card_authorization_posting.js"
import batchPosting from "./0090_batch_posting.js"
import decidedBatchPosting from "./0100_decided_batch_posting.js"
import wakeAfterCommit from "./0110_wake_after_commit.js"
import inboundFunding from "./0120_inbound_funding.js"
import grantConsentingKey from "./0130_grant_consenting_key.js"
import interactionsByClient from "./0140_interactions_by_client.js"
import listIndexes from "./0200_list_indexes.js"
import listCounts from "./0210_list_counts.js"
import leanPostTransfer from "./0220_lean_post_transfer.js"
import cardHolds from "./0230_card_holds.js"
import authorizationEndpoints from "./0240_authorization_endpoints.js"
import rateBuckets from "./0250_rate_buckets.js"
import idempotencyClaimToken from "./0260_idempotency_claim_token.js"
import metadata from "./0270_metadata.js"
import webhookPortal from "./0280_webhook_portal.js"
import settlementSlots from "./0300_settlement_slots.js"
import entriesPostedAt from "./0310_entries_posted_at.js"
import postingCounts from "./0320_posting_counts.js"
import transferListIndexes from "./0330_transfer_list_indexes.js"
import accountListIndexes from "./0340_account_list_indexes.js"
import accountEntryIndexes from "./0360_account_entry_indexes.js"
import freeCountShards from "./0370_free_count_shards.js"
import cardSpend from "./0380_card_spend.js"
import bookEntryCountLookups from "./0390_book_entry_count_lookups.js"
import listCombinationIndexes from "./0400_list_combination_indexes.js"
import cardAndAttemptListIndexes from "./0410_card_and_attempt_list_indexes.js"
import accountUpdateOrder from "./0411_account_update_order.js"
import liveGrantsIndex from "./0412_live_grants_index.js"
import coalescedBalanceEvents from "./0430_coalesced_balance_events.js"
import leanerPostings from "./0440_leaner_postings.js"
import walksAsRanges from "./0450_walks_as_ranges.js"
import vacuumAsTablesGrow from "./0460_vacuum_as_tables_grow.js"
import cardMessageOneCall from "./0470_card_message_one_call.js"
import walletTags from "./0480_wallet_tags.js"
import eventTags from "./0490_event_tags.js"
import networkRight from "./0500_network_right.js"
import networkMessages from "./0510_network_messages.js"
import transferReturns from "./0550_transfer_returns.js"
import settlementTotals from "./0560_settlement_totals.js"
import disputes from "./0690_disputes.js"
import timeOnlyListIndexes from "./0691_time_only_list_indexes.js"
import walletHolderSearch from "./0695_wallet_holder_search.js"
import cardLastFour from "./0699_card_last_four.js"
import cardholders from "./0705_cardholders.js"
import cardMerchantCountries from "./0710_card_merchant_countries.js"
import summedCounts from "./0750_summed_counts.js"
import cardSpendTotals from "./0751_card_spend_totals.js"
import tagEventsPerStatement from "./0840_tag_events_per_statement.js"
import periodCounts from "./0841_period_counts.js"
import accountChecksPerStatement from "./0990_account_checks_per_statement.js"

/**
 * Every migration of the PostgreSQL store, by id. The first ones were ranged by feature (0001–0009
 * foundation, 0010–0019 ledger, 0020–0029 cards, 0030–0039 webhooks); the Migrator runs only ids
 * above the latest applied, so every new migration takes an id above all existing ones (0040 on).
 */
export const migrations = {
  "0001_access": access,
  "0002_idempotency": idempotency,
  "0003_events": events,
  "0010_ledger": ledger,
  "0011_ledger_posting": ledgerPosting,
  "0020_cards": cards,
  "0030_webhooks": webhooks,
  "0040_ledger_post_transfer": ledgerPostTransfer,
  "0050_card_display": cardDisplay,
  "0060_changes": changes,
  "0070_oauth": oauth,
  "0080_card_authorization_posting": cardAuthorizationPosting,
  "0090_batch_posting": batchPosting,
  "0100_decided_batch_posting": decidedBatchPosting,
  "0110_wake_after_commit": wakeAfterCommit,
  "0120_inbound_funding": inboundFunding,
  "0130_grant_consenting_key": grantConsentingKey,
  "0140_interactions_by_client": interactionsByClient,
  "0200_list_indexes": listIndexes,
  "0210_list_counts": listCounts,
  "0220_lean_post_transfer": leanPostTransfer,
  "0230_card_holds": cardHolds,
  "0240_authorization_endpoints": authorizationEndpoints,
  "0250_rate_buckets": rateBuckets,
  "0260_idempotency_claim_token": idempotencyClaimToken,
  "0270_metadata": metadata,
  "0280_webhook_portal": webhookPortal,
  "0300_settlement_slots": settlementSlots,
  "0310_entries_posted_at": entriesPostedAt,
  "0320_posting_counts": postingCounts,
  "0330_transfer_list_indexes": transferListIndexes,
  "0340_account_list_indexes": accountListIndexes,
  "0360_account_entry_indexes": accountEntryIndexes,
  "0370_free_count_shards": freeCountShards,
  "0380_card_spend": cardSpend,
  "0390_book_entry_count_lookups": bookEntryCountLookups,
  "0400_list_combination_indexes": listCombinationIndexes,
  "0410_card_and_attempt_list_indexes": cardAndAttemptListIndexes,
  "0411_account_update_order": accountUpdateOrder,
  "0412_live_grants_index": liveGrantsIndex,
  "0430_coalesced_balance_events": coalescedBalanceEvents,
  "0440_leaner_postings": leanerPostings,
  "0450_walks_as_ranges": walksAsRanges,
  "0460_vacuum_as_tables_grow": vacuumAsTablesGrow,
  "0470_card_message_one_call": cardMessageOneCall,
  "0480_wallet_tags": walletTags,
  "0490_event_tags": eventTags,
  "0500_network_right": networkRight,
  "0510_network_messages": networkMessages,
  "0550_transfer_returns": transferReturns,
  "0560_settlement_totals": settlementTotals,
  "0690_disputes": disputes,
  "0691_time_only_list_indexes": timeOnlyListIndexes,
  "0695_wallet_holder_search": walletHolderSearch,
  "0699_card_last_four": cardLastFour,
  "0705_cardholders": cardholders,
  "0710_card_merchant_countries": cardMerchantCountries,
  "0750_summed_counts": summedCounts,
  "0751_card_spend_totals": cardSpendTotals,
  "0840_tag_events_per_statement": tagEventsPerStatement,
  "0841_period_counts": periodCounts,
  "0990_account_checks_per_statement": accountChecksPerStatement
}
