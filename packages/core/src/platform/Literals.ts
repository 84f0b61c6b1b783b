import { Schema } from "effect"

/**
 * A closed set of text values (a state, a role, an interval); anything else fails with one message
 * listing the set, instead of the per-member "Expected <first value>".
 */
export const oneOf = <const Values extends readonly [string, ...Array<string>]>(...values: Values) =>
  Schema.Literal(...values).annotations({
    message: () => ({ message: `must be one of ${values.join(", ")}`, override: true })
  })
