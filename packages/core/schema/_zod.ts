/**
 * zod for the schemas a dispatch may build (events, event types, hook
 * output). They are built at their first use, through {@linkcode zod}. The
 * bundled one-shot CLI replaces this module with `_zod_on_demand.ts`, which
 * loads zod only when {@linkcode loadZod} is awaited: a hook command that only
 * sees valid events and plain hook output never loads zod at all. Code that
 * may run in the bundled CLI therefore awaits `loadZod()` before the first
 * `zod()` on its path (here, where zod is imported statically, it is a no-op).
 *
 * @module
 */
import * as zodModule from "zod";

/** zod's `z`. */
export function zod(): typeof zodModule.z {
  return zodModule.z;
}

/** True when {@linkcode zod} may be called without awaiting {@linkcode loadZod} (here: always). */
export function zodLoaded(): boolean {
  return true;
}

/** Resolves once {@linkcode zod} may be called (here: at once). */
export function loadZod(): Promise<void> {
  return Promise.resolve();
}
