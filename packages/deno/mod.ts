/**
 * The Deno adapter: the executor with compilers and subprocesses, `hookbox serve`'s wiring, the edge bundler, upload builds and checks, caches.
 *
 * @module
 */
export { scanPromptHooks } from "./agent.ts";
export { createExecutor, type ExecutorOptions } from "./executor.ts";
