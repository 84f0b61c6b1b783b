/** The console's one DOM helper: elements from a tag, attributes and children, never from HTML text. */

export type Child = Node | string | number | null | undefined | false | ReadonlyArray<Child>

type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>

const append = (parent: Node, child: Child): void => {
  if (child === null || child === undefined || child === false) return
  if (Array.isArray(child)) {
    for (const each of child) append(parent, each)
    return
  }
  parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)))
}

const assign = (element: Element, attributes: Attributes) => {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value)
    else if (name === "value" && "value" in element) (element as HTMLInputElement).value = String(value)
    else element.setAttribute(name, value === true ? "" : String(value))
  }
}

/** An HTML element: `h("button", { type: "button", onclick }, "Freeze")`. Text is always text. */
export const h = <K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Array<Child>) => {
  const element = document.createElement(tag)
  assign(element, attributes)
  append(element, children)
  return element
}

/** An SVG element (the balance chart). */
export const s = (tag: string, attributes: Attributes = {}, ...children: Array<Child>) => {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag)
  assign(element, attributes)
  append(element, children)
  return element
}

/** Replaces what `parent` holds. */
export const replace = (parent: Element, ...children: Array<Child>) => {
  parent.replaceChildren()
  append(parent, children)
}
