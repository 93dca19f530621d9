/**
 * The host capabilities on Deno.
 *
 * @module
 */
export * from "./atomic.ts";
export * from "./cache_dir.ts";
export * from "./capped_reader.ts";
export * from "./fs.ts";
export * from "./sha256.ts";
export * from "./thread_priority.ts";

// Types the exports above refer to.
export type { DirEntry, HostFs, PathInfo } from "../core/host.ts";
