/**
 * The hook-folder reader on `node:fs`: `@hookbox/hookbox/node`.
 *
 * @module
 */
export * from "../host-node/fs.ts";
