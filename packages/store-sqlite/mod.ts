/**
 * The embedded store.
 *
 * @module
 */
export { openSqliteStore } from "./sqlite.ts";
