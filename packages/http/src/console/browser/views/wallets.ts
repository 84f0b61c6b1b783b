/** Wallets with their balances, and one wallet: balances, its balance over time, its postings, its cards. */
import type { Page } from "../api.js"
import { type BalancePoint, balanceChart, balanceSeries } from "../chart.js"
import { h, replace } from "../dom.js"
import { money, time, shortId } from "../format.js"
import type { BookTransfer, Card, FinancialAccount, Wallet } from "../records.js"
import { badge, errorBox, fields, link, pagedList } from "../ui.js"
import type { ViewContext } from "./context.js"

type WalletRow = Wallet & { readonly account: FinancialAccount | null }

/** The wallets of the program, a page at a time, each with its account's three balances. */
export const walletsView = ({ api }: ViewContext): HTMLElement =>
  h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, "Wallets"),
    pagedList<WalletRow>({
      caption: "Wallets",
      empty: "This program has no wallets yet.",
      load: async (query) => {
        const page = await api.get<Page<Wallet>>("/wallets", query)
        // One page's accounts, fetched together: never more than a page of requests.
        const accounts = await Promise.all(
          page.data.map((wallet) => api.get<FinancialAccount>(`/financial-accounts/${wallet.financial_account_id}`).catch(() => null))
        )
        return { total_count: page.total_count, data: page.data.map((wallet, index) => ({ ...wallet, account: accounts[index] ?? null })) }
      },
      columns: [
        { title: "Holder", cell: (row) => link(`/wallets/${row.id}`, row.holder.name, `Wallet of ${row.holder.name}`) },
        { title: "Posted", cell: (row) => (row.account === null ? "—" : money(row.account.balance.amount, row.account.currency)) },
        { title: "Pending", cell: (row) => (row.account === null ? "—" : money(row.account.pending_balance.amount, row.account.currency)) },
        {
          title: "Available",
          cell: (row) => (row.account === null ? "—" : money(row.account.available_balance.amount, row.account.currency))
        },
        { title: "Created", cell: (row) => time(row.created_at) }
      ]
    })
  )

/** How many postings one step of the chart reads (a page of the API at most). */
const CHART_PAGE = 100

/** The chart, read back from the newest posting a page at a time ("Earlier postings" adds the next). */
const balanceOverTime = (context: ViewContext, account: FinancialAccount): HTMLElement => {
  const section = h(
    "section",
    { "aria-labelledby": "chart-heading", class: "panel" },
    h("h3", { id: "chart-heading" }, "Balance over time")
  )
  const body = h("div", {})
  section.append(body)
  let points: Array<BalancePoint> = []
  let before = account.balance.amount
  let cursor: string | undefined
  let more = true
  const draw = () => {
    const earlier = h("button", { type: "button", disabled: !more }, "Earlier postings")
    earlier.addEventListener("click", () => void load())
    replace(
      body,
      points.length === 0 ? h("p", { class: "muted" }, "No postings yet.") : balanceChart(points, before, account.currency),
      h("p", { class: "muted" }, `${points.length} most recent postings shown, balance after each.`, " ", earlier)
    )
  }
  const load = async () => {
    try {
      const page = await context.api.get<Page<BookTransfer>>(`/financial-accounts/${account.id}/book-transfers`, {
        page_size: CHART_PAGE,
        starting_after: cursor
      })
      const series = balanceSeries(before, page.data, account.id)
      points = [...series.points, ...points]
      before = series.before
      cursor = page.data[page.data.length - 1]?.id
      more = page.data.length === CHART_PAGE
      draw()
    } catch (error) {
      replace(body, errorBox(error))
    }
  }
  void load()
  return section
}

/** Book transfers with their entries (the ledger's view of a wallet or a transaction). */
export const bookTransfersList = (
  caption: string,
  load: (query: { page_size: number; starting_after?: string | undefined }) => Promise<Page<BookTransfer>>
) =>
  pagedList<BookTransfer>({
    caption,
    empty: "No book transfers.",
    pageSize: 10,
    load,
    columns: [
      { title: "Posted", cell: (transfer) => time(transfer.posted_at) },
      { title: "Amount", cell: (transfer) => money(transfer.amount.amount, transfer.amount.currency) },
      {
        title: "Transaction",
        cell: (transfer) =>
          link(`/transactions/${transfer.transaction_id}`, shortId(transfer.transaction_id), `Transaction ${transfer.transaction_id}`)
      },
      {
        title: "Entries",
        cell: (transfer) =>
          h(
            "ul",
            { class: "entries" },
            ...transfer.entries.map((entry) =>
              h(
                "li",
                {},
                `${entry.entry_type} ${money(entry.amount.amount, entry.amount.currency)} · ${entry.book} · `,
                h("code", {}, shortId(entry.financial_account_id))
              )
            )
          )
      }
    ]
  })

/** The cards of a wallet, or of the program. */
export const cardsList = (context: ViewContext, caption: string, filter: { wallet_id?: string; state?: string }) =>
  pagedList<Card>({
    caption,
    empty: "No cards.",
    load: (query) => context.api.get<Page<Card>>("/cards", { ...query, ...filter }),
    columns: [
      { title: "Card", cell: (card) => link(`/cards/${card.id}`, `•••• ${card.last_four}`, `Card ending ${card.last_four}`) },
      { title: "State", cell: (card) => badge(card.state) },
      { title: "Type", cell: (card) => card.type },
      { title: "Expires", cell: (card) => `${String(card.exp_month).padStart(2, "0")}/${card.exp_year}` },
      { title: "Created", cell: (card) => time(card.created_at) }
    ]
  })

/** One wallet. */
export const walletView = async (context: ViewContext, walletId: string): Promise<HTMLElement> => {
  const wallet = await context.api.get<Wallet>(`/wallets/${encodeURIComponent(walletId)}`)
  const account = await context.api.get<FinancialAccount>(`/financial-accounts/${wallet.financial_account_id}`)
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, `Wallet of ${wallet.holder.name}`),
    fields([
      ["Wallet", h("code", {}, wallet.id)],
      ["Holder", `${wallet.holder.name}${wallet.holder.email === null ? "" : ` <${wallet.holder.email}>`}`],
      ["Tag", wallet.tag === null ? "—" : h("code", {}, wallet.tag)],
      ["Financial account", h("code", {}, account.id)],
      ["Posted balance", h("span", { "data-balance": "posted" }, money(account.balance.amount, account.currency))],
      ["Pending", h("span", { "data-balance": "pending" }, money(account.pending_balance.amount, account.currency))],
      ["Available", h("span", { "data-balance": "available" }, money(account.available_balance.amount, account.currency))],
      ["Created", time(wallet.created_at)]
    ]),
    balanceOverTime(context, account),
    h("h3", {}, "Cards"),
    cardsList(context, "Cards of this wallet", { wallet_id: wallet.id }),
    h("h3", {}, "Book transfers"),
    bookTransfersList("Book transfers of this wallet", (query) =>
      context.api.get<Page<BookTransfer>>(`/financial-accounts/${account.id}/book-transfers`, query)
    )
  )
}
