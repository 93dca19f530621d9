/**
 * Builds the QuickJS engine plugin for JS/TS hooks into `.cache/engine/`.
 *
 *     deno run -A scripts/build_engine.ts
 *
 * Needs `clang lld wasi-libc libclang-rt-14-dev-wasm32` (apt) and npm; the
 * QuickJS sources and Wizer are installed at pinned versions into `.cache/npm`.
 * A rebuild happens only when a source, flag or the clang version changed.
 *
 * @module
 */
import { buildEngine } from "../packages/compile/_js_engine.ts";
import { isHookboxError } from "../packages/core/errors.ts";

const started = performance.now();
console.error("build_engine: checking the JS engine plugin (a build takes about a minute, once)…");
try {
  const engine = await buildEngine();
  const size = (await Deno.stat(engine.path)).size;
  const ms = Math.round(performance.now() - started);
  console.log(
    `${
      engine.cached ? "cached" : "built"
    } ${engine.path} (${size} bytes, sha256 ${engine.sha256}) in ${ms} ms`,
  );
} catch (err) {
  console.error(isHookboxError(err) ? err.toLine() : err);
  Deno.exit(1);
}
