/**
 * The bundled one-shot CLI's `_zod.ts` (`scripts/build_cli.ts` swaps it in):
 * zod is loaded by {@linkcode loadZod}, not with the CLI's own modules —
 * loading it costs ~2 ms of every start that most dispatches never use.
 *
 * @module
 */
import type * as zodModule from "zod";
import { HookboxError } from "../errors.ts";

let loaded: typeof zodModule | null = null;
let loading: Promise<void> | null = null;

/** zod's `z`; only after {@linkcode loadZod} has resolved. */
export function zod(): typeof zodModule.z {
  if (loaded === null) throw new HookboxError("INTERNAL", "zod used before loadZod() resolved");
  return loaded.z;
}

/** True once {@linkcode loadZod} has resolved. */
export function zodLoaded(): boolean {
  return loaded !== null;
}

/** Loads zod (once). */
export function loadZod(): Promise<void> {
  return loading ??= import("zod").then((m) => {
    loaded = m;
  });
}
