/** An upper-case ASCII letter. */
type Letter =
  | "A"
  | "B"
  | "C"
  | "D"
  | "E"
  | "F"
  | "G"
  | "H"
  | "I"
  | "J"
  | "K"
  | "L"
  | "M"
  | "N"
  | "O"
  | "P"
  | "Q"
  | "R"
  | "S"
  | "T"
  | "U"
  | "V"
  | "W"
  | "X"
  | "Y"
  | "Z"

/**
 * An ISO 4217 currency code as the platform takes it: three upper-case letters, `"USD"`, `"EUR"`.
 * `"usd"` or `"US"` do not compile. Whether a well-formed code is a known currency is the server's
 * check, against its runtime's ISO 4217 list (400 invalid_request, param `currency`, otherwise):
 * that list differs between Node releases, so a fixed union here would refuse codes a server takes.
 */
export type CurrencyCode = `${Letter}${Letter}${Letter}`
