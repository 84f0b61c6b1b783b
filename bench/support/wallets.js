// The benches' funded wallets: `count` wallets in the program, each funded by one fednow transfer
// of `fundingMinor` from outside, written through the platform's own services (not timed).
import { CreateTransfer, CreateWallet, Ledger } from "@issuing/core"
import { Effect, Schema } from "effect"

const decodeTransfer = Schema.decodeUnknownSync(CreateTransfer)
const decodeWallet = Schema.decodeUnknownSync(CreateWallet)

/** The financial account ids of `count` new funded wallets of the program. */
export const fundedWallets = (instance, programId, count, fundingMinor) =>
  instance.runtime.runPromise(
    Effect.flatMap(Ledger, (ledger) =>
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
