/** The program's cardholders: who each is, how to reach them, and the outcome of the program's verification. */
import type { Page } from "../api.js"
import { h } from "../dom.js"
import { time } from "../format.js"
import type { Cardholder } from "../records.js"
import { badge, pagedList } from "../ui.js"
import type { ViewContext } from "./context.js"

/**
 * The cardholders of the program, a page at a time. Shows what a person running the program needs
 * to find one (name, type, email, country, status and the verification's reference); never the
 * date of birth or the street address (docs/cardholders.md).
 */
export const cardholdersView = ({ api }: ViewContext): HTMLElement =>
  h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, "Cardholders"),
    pagedList<Cardholder>({
      caption: "Cardholders",
      empty: "This program has no cardholders yet.",
      load: (query) => api.get<Page<Cardholder>>("/cardholders", query),
      columns: [
        { title: "Name", cell: (row) => row.name },
        { title: "Type", cell: (row) => row.type },
        { title: "Email", cell: (row) => row.email ?? "—" },
        { title: "Country", cell: (row) => row.billing_address.country },
        { title: "Status", cell: (row) => badge(row.status) },
        { title: "Reference", cell: (row) => row.verification.reference ?? "—" },
        { title: "Created", cell: (row) => time(row.created_at) }
      ]
    })
  )
