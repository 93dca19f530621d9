/**
 * The hook-folder reader on `node:fs`.
 *
 * @module
 */
export * from "./fs.ts";
