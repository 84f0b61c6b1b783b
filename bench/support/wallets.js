// The benches' funded wallets: `count` wallets in the program, each funded by one fednow transfer
// of `fundingMinor` from outside, written through the platform's own services (not timed).
import * as thisCore from "@issuing/core"
import * as thisEffect from "effect"

/**
 * The financial account ids of `count` new funded wallets of the program; `build`: the `@issuing/core`
 * and `effect` modules the instance was made from (another checkout's, for a bench's `--against`).
 */
export const fundedWallets = (instance, programId, count, fundingMinor, build = { core: thisCore, effect: thisEffect }) => {
  const { core } = build
  const { Effect, Schema } = build.effect
  const decodeTransfer = Schema.decodeUnknownSync(core.CreateTransfer)
  const decodeWallet = Schema.decodeUnknownSync(core.CreateWallet)
  return instance.runtime.runPromise(
    Effect.flatMap(core.Ledger, (ledger) =>
      Effect.forEach(
        Array.from({ length: count }, (_, i) => i),
        (i) =>
          Effect.gen(function* () {
            const wallet = yield* ledger.createWallet(programId, decodeWallet({ holder: { name: `Wallet ${i}` } }))
            yield* ledger.postTransfer(
              programId,
              decodeTransfer({
                payment_rail: "fednow_instant",
                amount: fundingMinor,
                currency: "USD",
                to_financial_account_id: wallet.financial_account_id
              })
            )
            return wallet.financial_account_id
          })
      )
    )
  )
}
