/**
 * `text` with `from` replaced by `to`, exactly once. A migration that redefines a function from an
 * earlier migration's text (docs/architecture.md#migrations) names what it changes this way: a body
 * that no longer holds `from`, or holds it twice, is a defect of the migration, found when it loads.
 */
export const replaceOnce = (text: string, from: string, to: string): string => {
  const at = text.indexOf(from)
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`a function's text: expected one occurrence of ${from}`)
  return text.slice(0, at) + to + text.slice(at + from.length)
}
