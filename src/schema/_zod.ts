/**
 * zod for the schemas a dispatch may build (events, event types, hook
 * output). They are built at their first use, through {@linkcode zod}: the
 * bundled one-shot CLI makes this module's import of zod a deferred one
 * (`import defer`, `scripts/build_cli.ts`), so a hook command that only sees
 * valid events and plain hook output never evaluates zod at all.
 *
 * @module
 */
import * as zodModule from "zod";

/** zod's `z` (in the bundled CLI, zod is evaluated at this call's first use). */
export function zod(): typeof zodModule.z {
  return zodModule.z;
}
