/** API keys of the organization: the list, a new key (its secret shown once), and revocation. */
import type { Page } from "../api.js"
import { h, replace } from "../dom.js"
import { time } from "../format.js"
import type { ApiKey } from "../records.js"
import { actionForm, badge, confirmButton, input, pagedList, select, success } from "../ui.js"
import type { ViewContext } from "./context.js"

/** The rights beside the role a key holds, as the list shows them. */
const rights = (key: ApiKey): string =>
  [key.pan_reveal && "PAN reveal", key.card_display && "card display", key.inbound_funding && "inbound funding", key.network && "network"]
    .filter((right) => right !== false)
    .join(", ") || "—"

/** A checkbox field. */
const checkbox = (id: string): HTMLInputElement => h("input", { id, name: id, type: "checkbox" })

/**
 * A new key (POST /v1/api-keys): its name, role, whether it is limited to this program, and the
 * rights it may be given (the API refuses a right the signed-in key may not grant). Its secret is
 * shown once.
 */
const newKeyForm = (context: ViewContext, after: () => void): HTMLElement => {
  const name = input("key-name", { required: true, maxlength: "100", autocomplete: "off" })
  const role = select("key-role", [
    ["viewer", "Viewer (reads)"],
    ["developer", "Developer (reads and writes)"],
    ["admin", "Admin (also keys and programs)"]
  ])
  const onlyHere = checkbox("key-this-program")
  onlyHere.checked = true
  const panReveal = checkbox("key-pan-reveal")
  const cardDisplay = checkbox("key-card-display")
  return actionForm({
    id: "new-key",
    title: "New API key",
    fields: [
      ["Name", name],
      ["Role", role],
      ["Only this program", onlyHere, "Unchecked: every program of the organization."],
      ["May reveal card numbers", panReveal],
      ["May open the card display", cardDisplay]
    ],
    submit: "Create key",
    run: async () => {
      const created = await context.api.write<ApiKey & { secret: string }>(
        "POST",
        "/api-keys",
        {
          name: name.value.trim(),
          role: role.value,
          program_ids: onlyHere.checked ? [context.programId] : null,
          pan_reveal: panReveal.checked,
          card_display: cardDisplay.checked
        },
        "organization"
      )
      after()
      return success(
        h("p", {}, `Key ${created.name} created. Its secret, shown this once — store it now:`),
        h("code", { class: "secret" }, created.secret)
      )
    }
  })
}

/** The organization's API keys (GET /v1/api-keys, admin keys only: others see the API's 403). */
export const apiKeysView = (context: ViewContext): HTMLElement => {
  const status = h("div", { role: "status" })
  const list = h("div", {})
  const show = () =>
    replace(
      list,
      pagedList<ApiKey>({
        caption: "API keys",
        empty: "No API keys.",
        load: (query) => context.api.get<Page<ApiKey>>("/api-keys", query, "organization"),
        columns: [
          { title: "Name", cell: (key) => key.name },
          { title: "Role", cell: (key) => key.role },
          { title: "Programs", cell: (key) => (key.program_ids === null ? "all" : `${key.program_ids.length}`) },
          { title: "Rights", cell: rights },
          { title: "Created", cell: (key) => time(key.created_at) },
          {
            title: "State",
            cell: (key) =>
              key.revoked_at !== null
                ? badge("REVOKED")
                : confirmButton(
                    "Revoke",
                    `Revoking ${key.name} stops it working at once, everywhere (this console too, if it is the key signed in).`,
                    status,
                    async () => {
                      await context.api.write("DELETE", `/api-keys/${key.id}`, undefined, "organization")
                      replace(status, success(`Key ${key.name} revoked.`))
                      show()
                    },
                    { "aria-label": `Revoke key ${key.name}` }
                  )
          }
        ]
      })
    )
  show()
  return h(
    "section",
    { "aria-labelledby": "view-title" },
    h("h2", { id: "view-title", tabindex: "-1" }, "API keys"),
    status,
    list,
    newKeyForm(context, show)
  )
}
