import { Effect, Option } from "effect"
import { NotFound } from "./Errors.js"
import { isUuid } from "./Ids.js"

/** What a lookup is reported as when it finds nothing: the resource's name and the id parameter. */
export interface OwnedLookup {
  readonly resource: string
  readonly param: string | null
}

/**
 * The one lookup of a caller-supplied id (a path id, a body reference): not a UUID, or no such row
 * among the caller's (the store's `find` is already scoped to the program or organization) →
 * NotFound naming `param`. Ids are compared in lower case; a malformed id never reaches the store.
 * Resources of another program are reported exactly like unknown ones (docs/api.md#scoping).
 */
export const findOwned = <A, E, R>(
  id: string,
  lookup: OwnedLookup,
  find: (id: string) => Effect.Effect<Option.Option<A>, E, R>
): Effect.Effect<A, NotFound | E, R> =>
  isUuid(id)
    ? Effect.flatMap(
        find(id.toLowerCase()),
        Option.match({
          onNone: () => Effect.fail(missing(lookup)),
          onSome: Effect.succeed
        })
      )
    : Effect.fail(missing(lookup))

/** The NotFound of a lookup, for callers that found nothing by other means. */
export const missing = (lookup: OwnedLookup): NotFound => new NotFound({ message: `No such ${lookup.resource}.`, param: lookup.param })
