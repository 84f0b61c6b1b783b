/** The console's building blocks: error messages, field lists, tables, buttons that call the API, paged lists. */
import { ApiError, type Page } from "./api.js"
import { type Child, h, replace } from "./dom.js"
import { toMinor } from "./format.js"

/** How a failure reads: the API's own message, its code and param, and the request id to quote. */
export const errorBox = (error: unknown): HTMLElement => {
  if (!(error instanceof ApiError)) return h("p", { class: "error", role: "alert" }, `Something went wrong: ${String(error)}`)
  const hint =
    error.status === 401
      ? "The key or token was refused (unknown, revoked or expired). Sign out and sign in again."
      : error.status === 403
        ? "This key or token may not do this."
        : error.status === 404 && error.code === "not_found"
          ? "Not found, or not visible to this key in this program."
          : null
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", {}, `${error.status || "No answer"} ${error.code}`),
    ": ",
    error.message,
    error.param === null ? null : h("span", { class: "param" }, ` (${error.param})`),
    hint === null ? null : h("p", {}, hint),
    error.requestId === null ? null : h("p", { class: "muted" }, `Request ${error.requestId}`)
  )
}

/** A definition list of label and value pairs. */
export const fields = (pairs: ReadonlyArray<readonly [string, Child]>): HTMLElement =>
  h("dl", { class: "fields" }, ...pairs.map(([label, value]) => [h("dt", {}, label), h("dd", {}, value ?? "—")]))

/** A table with a caption (its accessible name), column headers and rows; on a narrow screen it scrolls sideways in its box. */
export const table = (caption: string, headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<Child>>): HTMLElement =>
  h(
    "div",
    { class: "table-scroll" },
    h(
      "table",
      {},
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, ...headers.map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, ...rows.map((cells) => h("tr", {}, ...cells.map((cell) => h("td", {}, cell)))))
    )
  )

/** A link to a console view (a hash route: the page never reloads, the credential stays in memory). */
export const link = (route: string, text: Child, label?: string): HTMLElement => h("a", { href: `#${route}`, "aria-label": label }, text)

/** A state or status as a badge. */
export const badge = (text: string): HTMLElement => h("span", { class: `badge badge-${text.toLowerCase()}` }, text)

/**
 * A button that runs an API call: disabled while it runs, its failure shown in `status` (a live
 * region), its success by `done`.
 */
export const actionButton = (
  text: string,
  status: HTMLElement,
  run: () => Promise<unknown>,
  attributes: Record<string, string> = {}
): HTMLButtonElement => {
  const button = h("button", { type: "button", ...attributes }, text)
  button.addEventListener("click", async () => {
    button.disabled = true
    replace(status, h("p", { class: "muted" }, `${text}…`))
    try {
      await run()
    } catch (error) {
      replace(status, errorBox(error))
    } finally {
      button.disabled = false
    }
  })
  return button
}

/** A labelled field of a form: its label, its control (whose `id` the label names) and a hint under it. */
export type FormField = readonly [label: string, control: HTMLInputElement | HTMLSelectElement, hint?: string]

/**
 * A form that acts through the API: its fields, one submit button (disabled while it runs), and a
 * live region under it that shows what `run` returns, or the API's refusal with its `param`, or a
 * problem `run` found before asking (a thrown string).
 */
export const actionForm = (options: {
  readonly id: string
  readonly title: string
  readonly intro?: string
  readonly fields: ReadonlyArray<FormField>
  readonly submit: string
  readonly run: () => Promise<Child>
}): HTMLElement => {
  const status = h("div", { "aria-live": "polite", class: "form-status" })
  const submit = h("button", { type: "submit" }, options.submit)
  const form = h(
    "form",
    { class: "action-form panel", id: options.id, "aria-labelledby": `${options.id}-title` },
    h("h3", { id: `${options.id}-title` }, options.title),
    options.intro === undefined ? null : h("p", { class: "muted" }, options.intro),
    ...options.fields.map(([label, control, hint]) =>
      h(
        "div",
        { class: "field" },
        h("label", { for: control.id }, label),
        control,
        hint === undefined ? null : h("p", { class: "muted hint" }, hint)
      )
    ),
    h("div", { class: "form-actions" }, submit),
    status
  )
  form.addEventListener("submit", async (event) => {
    event.preventDefault()
    submit.disabled = true
    replace(status, h("p", { class: "muted" }, `${options.submit}…`))
    try {
      replace(status, await options.run())
    } catch (error) {
      replace(status, typeof error === "string" ? h("p", { class: "error", role: "alert" }, error) : errorBox(error))
    } finally {
      submit.disabled = false
    }
  })
  return form
}

/** A text field. */
export const input = (id: string, attributes: Record<string, string | boolean> = {}): HTMLInputElement =>
  h("input", { id, name: id, type: "text", spellcheck: "false", ...attributes })

/** A select of `[value, text]` options. */
export const select = (id: string, options: ReadonlyArray<readonly [string, string]>, selected?: string): HTMLSelectElement =>
  h("select", { id, name: id }, ...options.map(([value, text]) => h("option", { value, selected: value === selected }, text)))

/** A success message. */
export const success = (...children: Array<Child>): HTMLElement => h("div", { class: "success", role: "status" }, ...children)

/** A button for a final step: it first asks, in `status`, with `warning` and a Confirm and a Cancel button. */
export const confirmButton = (
  text: string,
  warning: string,
  status: HTMLElement,
  run: () => Promise<unknown>,
  attributes: Record<string, string> = {}
): HTMLButtonElement => {
  const button = h("button", { type: "button", ...attributes }, text)
  button.addEventListener("click", () => {
    const confirm = actionButton(`Confirm: ${text.toLowerCase()}`, status, run)
    const cancel = h("button", { type: "button" }, "Cancel")
    cancel.addEventListener("click", () => replace(status))
    replace(status, h("p", { class: "warning" }, warning, " ", confirm, " ", cancel))
    confirm.focus()
  })
  return button
}

export interface Column<T> {
  readonly title: string
  readonly cell: (item: T) => Child
}

/**
 * A list paged through the API with `starting_after` (docs/api.md#paging): one page at a time,
 * whatever the size of the list; Next follows the last item, Previous goes back along the ids
 * already seen. `total_count` says how many there are.
 */
export const pagedList = <T extends { readonly id: string }>(options: {
  readonly caption: string
  readonly columns: ReadonlyArray<Column<T>>
  readonly load: (query: { page_size: number; starting_after?: string | undefined }) => Promise<Page<T>>
  readonly pageSize?: number
  readonly empty: string
}): HTMLElement => {
  const pageSize = options.pageSize ?? 20
  const section = h("div", { class: "paged" })
  // The cursor of each page shown so far: undefined for the first.
  const cursors: Array<string | undefined> = [undefined]
  const show = async (index: number) => {
    replace(section, h("p", { class: "muted", role: "status" }, `Loading ${options.caption.toLowerCase()}…`))
    let page: Page<T>
    try {
      page = await options.load({ page_size: pageSize, starting_after: cursors[index] })
    } catch (error) {
      replace(section, errorBox(error))
      return
    }
    cursors.length = index + 1
    const last = page.data[page.data.length - 1]
    if (last !== undefined) cursors.push(last.id)
    const first = index * pageSize + 1
    const summary =
      page.data.length === 0
        ? index === 0
          ? options.empty
          : "No more items."
        : `${first}–${first + page.data.length - 1} of ${page.total_count.toLocaleString("en-US")}`
    const previous = h("button", { type: "button", disabled: index === 0 }, "Previous page")
    previous.addEventListener("click", () => void show(index - 1))
    const next = h(
      "button",
      { type: "button", disabled: page.data.length < pageSize || first + page.data.length > page.total_count },
      "Next page"
    )
    next.addEventListener("click", () => void show(index + 1))
    replace(
      section,
      page.data.length === 0
        ? null
        : table(
            options.caption,
            options.columns.map((column) => column.title),
            page.data.map((item) => options.columns.map((column) => column.cell(item)))
          ),
      h("nav", { class: "pager", "aria-label": `${options.caption} pages` }, previous, h("span", { role: "status" }, summary), next)
    )
  }
  void show(0)
  return section
}

/** An amount field in major units, its currency in its label. */
export const amountField = (id: string, currency: string): [string, HTMLInputElement, string] => [
  `Amount (${currency})`,
  input(id, { inputmode: "decimal", autocomplete: "off", required: true }),
  `In ${currency}, e.g. 12.50.`
]

/** The minor units an amount field holds, or the problem to show (thrown, so the form shows it). */
export const minorOf = (field: HTMLInputElement, currency: string): number => {
  const amount = toMinor(field.value, currency)
  if ("problem" in amount) throw amount.problem
  return amount.minor
}
