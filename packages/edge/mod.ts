/**
 * The edge Worker and its bundle's data.
 *
 * @module
 */
export * from "./bundle_data.ts";
export * from "./worker.ts";
