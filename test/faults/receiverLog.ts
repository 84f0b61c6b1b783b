import { type Received, type Receiver, startReceiver } from "../webhooks/receiver.js"
import type { ReceiverLog } from "./invariants.js"

/** A webhook receiver whose every request, with the status it answered, feeds the invariant check. */
export interface LoggedReceiver {
  readonly receiver: Receiver
  /** The receiver's tries as the check takes them, for the subscription it was given to. */
  readonly logFor: (subscriptionId: string) => ReceiverLog
  readonly close: () => Promise<void>
}

/** Starts a receiver answering `status(request)` (default: 200, and 503 to one request in ten, so retries happen). */
export const startLoggedReceiver = async (
  status: (request: Received) => number = () => (Math.random() < 0.1 ? 503 : 200)
): Promise<LoggedReceiver> => {
  const receiver = await startReceiver()
  const answered = new WeakMap<Received, number>()
  receiver.reply = (request) => {
    const code = status(request)
    answered.set(request, code)
    return { status: code, body: code < 300 ? "ok" : "busy" }
  }
  return {
    receiver,
    logFor: (subscriptionId) => ({
      subscriptionId,
      // Read when the check reads it: after the deliveries have settled.
      get tries() {
        return receiver.received.map((request) => ({ eventId: request.id, atMs: request.receivedAtMs, status: answered.get(request) }))
      }
    }),
    close: () => receiver.close()
  }
}
