/**
 * Stands in for `@hono/zod-openapi` in an edge Worker (see `NO_OPENAPI`):
 * plain zod, where `.openapi()` hands the schema back unchanged (validation
 * is the same).
 *
 * @module
 */
import { z } from "zod";

const proto = z.ZodType.prototype as unknown as { openapi?: (this: unknown) => unknown };
proto.openapi ??= function (this: unknown) {
  return this;
};

export { z };
