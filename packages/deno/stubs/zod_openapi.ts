/**
 * Stands in for `@hono/zod-openapi` in an edge Worker (see `NO_OPENAPI`):
 * plain zod, where `.openapi()` hands the schema back unchanged (validation
 * is the same). The Worker never builds the service's schemas on the two
 * routes it serves, so `z` here is zod as the core's schemas get it
 * (`core/schema/loaders.ts`, on demand in a Worker): reading it before zod is
 * loaded fails loudly, never silently.
 *
 * @module
 */
import type * as zodModule from "zod";
import { zod } from "../../core/schema/loaders.ts";

type Z = typeof zodModule.z;

let patched: Z | null = null;

/** zod's `z`, with `.openapi()` added once. */
function real(): Z {
  if (patched !== null) return patched;
  const z = zod();
  const proto = z.ZodType.prototype as unknown as { openapi?: (this: unknown) => unknown };
  proto.openapi ??= function (this: unknown) {
    return this;
  };
  return patched = z;
}

/** zod's `z`, looked up at each use. */
export const z: Z = new Proxy({} as Z, {
  get: (_target, key) => Reflect.get(real(), key),
  has: (_target, key) => Reflect.has(real(), key),
});
