/** Transfers: the program's transfers on every rail, by status and rail, each side named; and a book transfer between two wallets. */
import type { Page } from "../api.js"
import { h, replace } from "../dom.js"
import { money, time } from "../format.js"
import { AccountNames, nameOf, walletChoices, walletLabel } from "../names.js"
import type { FinancialAccount, Transfer, Wallet } from "../records.js"
import { actionForm, amountField, badge, link, minorOf, pagedList, select, success } from "../ui.js"
import type { ViewContext } from "./context.js"

const STATUSES = ["", "PENDING", "SETTLED", "RETURNED"] as const
const RAILS = ["", "book", "ach_same_day", "wire", "fednow_instant", "card"] as const

/** A book transfer between two of the program's wallets, in the sending wallet's currency (read from its account). */
const transferForm = (context: ViewContext, wallets: ReadonlyArray<Wallet>, after: () => void): HTMLElement => {
  const options = wallets.map((wallet) => [wallet.id, walletLabel(wallet)] as const)
  const from = select("book-from", options)
  const to = select("book-to", options, options[1]?.[0])
  const walletOf = (id: string) => wallets.find((wallet) => wallet.id === id)
  let account: Promise<FinancialAccount> | null = null
  const amountLabel = h("span", {}, "Amount")
  const readCurrency = () => {
    const sender = walletOf(from.value)
    if (sender === undefined) return
    const reading = context.api.get<FinancialAccount>(`/financial-accounts/${sender.financial_account_id}`)
    account = reading
    void reading.then((read) => replace(amountLabel, `Amount (${read.currency})`)).catch(() => replace(amountLabel, "Amount"))
  }
  const [, amount] = amountField("book-amount", "")
  const form = actionForm({
    id: "new-transfer",
    title: "New book transfer",
    intro: "Moves money between two wallets of this program at once (rail book). The program's newest 100 wallets are offered.",
    fields: [
      ["From wallet", from],
      ["To wallet", to],
      ["Amount", amount, "In the sending wallet's currency, e.g. 12.50."]
    ],
    submit: "Send",
    run: async () => {
      const sender = walletOf(from.value)
      const receiver = walletOf(to.value)
      if (sender === undefined || receiver === undefined || account === null) throw "Choose both wallets."
      const { currency } = await account
      const minor = minorOf(amount, currency)
      const transfer = await context.api.write<Transfer>("POST", "/transfers", {
        payment_rail: "book",
        amount: minor,
        currency,
        from_financial_account_id: sender.financial_account_id,
        to_financial_account_id: receiver.financial_account_id
      })
      after()
      return success(
        `${money(transfer.amount, transfer.currency)} sent from ${sender.holder.name} to ${receiver.holder.name}: ${transfer.status}.`
      )
    }
  })
  replace(form.querySelector("label[for=book-amount]")!, amountLabel)
  from.addEventListener("change", readCurrency)
  readCurrency()
  return form
}

/** Transfers (GET /v1/transfers), newest first, as filtered, both sides named. */
export const transfersList = (
  context: ViewContext,
  names: AccountNames,
  caption: string,
  filter: { status?: string; payment_rail?: string; wallet_id?: string }
) =>
  pagedList<Transfer>({
    caption,
    empty: "No transfers.",
    load: (query) => context.api.get<Page<Transfer>>("/transfers", { ...query, ...filter }),
    columns: [
      { title: "Created", cell: (transfer) => time(transfer.created_at) },
      { title: "Rail", cell: (transfer) => transfer.payment_rail },
      { title: "Amount", cell: (transfer) => money(transfer.amount, transfer.currency) },
      { title: "From", cell: (transfer) => nameOf(names, transfer.from_financial_account_id) },
      { title: "To", cell: (transfer) => nameOf(names, transfer.to_financial_account_id) },
      { title: "Status", cell: (transfer) => badge(transfer.status) },
      {
        title: "Transaction",
        cell: (transfer) =>
          link(`/transactions/${transfer.transaction_id}`, transfer.description ?? "Transaction", `Transaction ${transfer.transaction_id}`)
      }
    ]
  })

/** The program's transfers (GET /v1/transfers), newest first, filtered by status and rail. */
export const transfersView = async (context: ViewContext): Promise<HTMLElement> => {
  const wallets = await walletChoices(context.api)
  const names = new AccountNames(context.api)
  names.know(wallets)
  const status = select(
    "transfer-status",
    STATUSES.map((value) => [value, value === "" ? "Any status" : value])
  )
  const rail = select(
    "transfer-rail",
    RAILS.map((value) => [value, value === "" ? "Any rail" : value])
  )
  const list = h("div", {})
  const show = () => replace(list, transfersList(context, names, "Transfers", { status: status.value, payment_rail: rail.value }))
  status.addEventListener("change", show)
  rail.addEventListener("change", show)
  show()
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, "Transfers"),
    h(
      "div",
      { class: "filters" },
      h("label", { for: "transfer-status" }, "Status"),
      status,
      h("label", { for: "transfer-rail" }, "Rail"),
      rail
    ),
    list,
    wallets.length < 2 ? h("p", { class: "muted" }, "A book transfer needs two wallets.") : transferForm(context, wallets, show)
  )
}
