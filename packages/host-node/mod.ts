/**
 * The hook-folder reader on `node:fs`.
 *
 * @module
 */
export * from "./fs.ts";

// Types the exports above refer to.
export type { DirEntry, HostFs, PathInfo } from "../core/host.ts";
