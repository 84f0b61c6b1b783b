import { type IssuingSettings, runDeliveryWorker } from "@issuing/core"
import { Fiber } from "effect"
import type { StoreKind } from "../support/databases.js"
import { startPlatform, type TestPlatform } from "../support/platform.js"
import { type Receiver, startReceiver } from "./receiver.js"

/** A platform with its delivery worker running, and a local receiver to subscribe. */
export interface DeliveryFixture {
  readonly platform: TestPlatform
  readonly receiver: Receiver
  /** Stops the worker, the receiver and the platform. */
  readonly stop: () => Promise<void>
}

/** Starts a platform on a fresh database of `kind`, its delivery worker, and a receiver. */
export const startDeliveries = async (kind: StoreKind, settings: Partial<IssuingSettings> = {}): Promise<DeliveryFixture> => {
  const platform = await startPlatform(kind, settings)
  const receiver = await startReceiver()
  const worker = platform.instance.runtime.runFork(runDeliveryWorker())
  return {
    platform,
    receiver,
    stop: async () => {
      await platform.instance.runtime.runPromise(Fiber.interrupt(worker))
      await receiver.close()
      await platform.close()
    }
  }
}
