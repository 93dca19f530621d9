/**
 * The bundled one-shot CLI's `_re2.ts` (`scripts/build_cli.ts` swaps it in):
 * the RE2 engine is loaded by {@linkcode loadRe2}, only for a matcher that
 * needs it.
 *
 * @module
 */
import type * as re2Module from "re2js";
import { HookboxError } from "../errors.ts";

let loaded: typeof re2Module | null = null;
let loading: Promise<void> | null = null;

/** The `re2js` module; only after {@linkcode loadRe2} has resolved. */
export function re2(): typeof re2Module {
  if (loaded === null) throw new HookboxError("INTERNAL", "re2js used before loadRe2() resolved");
  return loaded;
}

/** True once {@linkcode loadRe2} has resolved. */
export function re2Loaded(): boolean {
  return loaded !== null;
}

/** Loads the RE2 engine (once). */
export function loadRe2(): Promise<void> {
  return loading ??= import("re2js").then((m) => {
    loaded = m;
  });
}
