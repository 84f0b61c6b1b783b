import type { ServerConfig } from "../config.js"
import { resealAll } from "./VaultCommand.js"

/**
 * `issuing cards reseal`: the earlier name of `issuing vault reseal`, kept as an alias. It re-seals
 * card data **and** webhook signing secrets under the current vault key (see VaultCommand.ts).
 */
export const cardsCommand = async (config: ServerConfig, args: ReadonlyArray<string>): Promise<number> => {
  if (args[0] !== "reseal") {
    process.stderr.write("issuing: usage: issuing cards reseal (alias of issuing vault reseal)\n")
    return 2
  }
  return resealAll(config)
}
