import { type OrderField, type OrderFields, orderFields } from "../platform/Paging.js"

// Order fields of each ledger list (docs/ledger.md#endpoints-filters-and-order-fields). The columns
// name the aliases of the store's queries (SqlLedger*.ts): `a`/`b` for accounts and their
// principal balance row, `bt` for book transfers. The lists that grow with money movement
// (transfers, transactions, book transfers) order by time only, as Stripe's and Lithic's do
// (docs/api.md#paging): each order is one index per filter combination, kept on every write.

export const WALLET_ORDER_FIELDS = orderFields({ created_at: "created_at", updated_at: "updated_at" }, { newest: "created_at" })
export type WalletOrderField = OrderField<typeof WALLET_ORDER_FIELDS>

/** An account's updated_at is its principal balance row's. */
export const FINANCIAL_ACCOUNT_ORDER_FIELDS = orderFields(
  { created_at: "a.created_at", updated_at: "b.updated_at" },
  { newest: "created_at", idColumn: "a.id" }
)
export type FinancialAccountOrderField = OrderField<typeof FINANCIAL_ACCOUNT_ORDER_FIELDS>

/**
 * The same fields as the store reads the list by updated_at: ties broken on the balance row's
 * account id (the account's id), so that the order is the one of the balance rows' index.
 */
export const FINANCIAL_ACCOUNT_UPDATE_ORDER_FIELDS = orderFields(
  { created_at: "a.created_at", updated_at: "b.updated_at" },
  { newest: "created_at", idColumn: "b.financial_account_id" }
) satisfies OrderFields<FinancialAccountOrderField>

export const TRANSFER_ORDER_FIELDS = orderFields({ created_at: "created_at", updated_at: "updated_at" }, { newest: "created_at" })
export type TransferOrderField = OrderField<typeof TRANSFER_ORDER_FIELDS>

export const TRANSACTION_ORDER_FIELDS = orderFields({ created_at: "created_at", updated_at: "updated_at" }, { newest: "created_at" })
export type TransactionOrderField = OrderField<typeof TRANSACTION_ORDER_FIELDS>

/** Book transfers are immutable: created_at is an alias of posted_at, the default order's field. */
export const BOOK_TRANSFER_ORDER_FIELDS = orderFields(
  { posted_at: "bt.posted_at", created_at: "bt.posted_at" },
  { newest: "posted_at", idColumn: "bt.id" }
)
export type BookTransferOrderField = OrderField<typeof BOOK_TRANSFER_ORDER_FIELDS>
