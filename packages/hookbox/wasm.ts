/**
 * The WebAssembly module rewriter: `@hookbox/hookbox/wasm`.
 *
 * @module
 */
export * from "../rewriter/mod.ts";
