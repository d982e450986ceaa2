/**
 * @module exports/store-contract
 * `mcp-edge-validator/store-contract`: the store contract (docs/stores.md "The contract") as plain
 * cases, for a store backend of your own: loop over `STORE_CONTRACT` in any test runner and run
 * each case with `runStoreContractCase(case, factory)` on a fresh store. Uses node:assert (Node,
 * Bun, Deno; workerd with `nodejs_compat`); nothing else is imported.
 */
export { STORE_CONTRACT, STORE_CONTRACT_VALUES, runStoreContractCase, type StoreContractCase, type StoreFactory, type StoreUnderTest } from '../stores/store-contract'
