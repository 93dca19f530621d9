/**
 * The RE2 engine (npm `re2js`) for matcher patterns that are not plain words
 * (`matcher.ts`). The bundled one-shot CLI replaces this module with
 * `_re2_on_demand.ts`, which loads the engine only when {@linkcode loadRe2}
 * is awaited; code that may run there awaits it before the first `re2()`
 * (here it is a no-op).
 *
 * @module
 */
import * as re2Module from "re2js";

/** The `re2js` module. */
export function re2(): typeof re2Module {
  return re2Module;
}

/** True when {@linkcode re2} may be called without awaiting {@linkcode loadRe2} (here: always). */
export function re2Loaded(): boolean {
  return true;
}

/** Resolves once {@linkcode re2} may be called (here: at once). */
export function loadRe2(): Promise<void> {
  return Promise.resolve();
}
