/** @issuing/http: the /v1 HTTP API, mountable in a host app or served standalone, and the issuing CLI. */
export {
  backgroundWork,
  createIssuing,
  issuingLayer,
  VaultKeysUnusable,
  type IssuingInstance,
  type IssuingOptions,
  runOn,
  type StoreLayer
} from "./App.js"
export { IssuingApi } from "./Api.js"
export {
  type Iso8583Host,
  type Iso8583HostOptions,
  type Iso8583Tls,
  MAX_IN_FLIGHT_PER_CONNECTION,
  type PemSource,
  startIso8583Host
} from "./iso8583/Host.js"
export { configFromEnv, type HostConfig, type HostMount } from "./HostConfig.js"
export { loadConfig, resolveVaultKeys, type ServerConfig, type DatabaseTarget, type Iso8583Config } from "./config.js"
export { ApiFailure, ERROR_CODES, type ErrorCode, type ErrorCodeDoc, toApiFailure } from "./errors.js"
export { bootstrapOrganization, startServer, type RunningServer } from "./server.js"
export { connectionNotes, loadStore, type LoadedStore, StorePackageMissing, storeFor } from "./Store.js"
export {
  deliveryQueueMetrics,
  sampleDeliveryQueue,
  type TelemetryLayer,
  telemetryFromEnv,
  telemetryLayer,
  traceRequests,
  withDeliveryTelemetry
} from "./Telemetry.js"
