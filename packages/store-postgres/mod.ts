/**
 * The PostgreSQL store.
 *
 * @module
 */
export { openPostgresStore } from "./postgres.ts";
