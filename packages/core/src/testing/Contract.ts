import type { SqlClient } from "@effect/sql"
import type { Layer } from "effect"
import type { IssuingStores } from "../Stores.js"

/** What a store package provides: every port plus its SqlClient. */
export type ContractStores = IssuingStores | SqlClient.SqlClient

/** A store layer over a fresh, migrated database. */
export type ContractStoreLayer = Layer.Layer<ContractStores, unknown>

/**
 * One port's contract: registers its tests (with @effect/vitest's `layer(store, {
 * excludeTestServices: true })`, so the real clock applies) under the given suite name.
 */
export type PortContract = (name: string, store: ContractStoreLayer) => void
