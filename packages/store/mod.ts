/**
 * The service's `Store` interface and its rows.
 *
 * @module
 */
export * from "./store.ts";
