/**
 * Stands in for zod's `v4/classic/from-json-schema.js` in hookbox's bundles
 * (see `ZOD_TRIMMED`): nothing in hookbox reads JSON Schema into zod.
 *
 * @module
 */
/** Not in this bundle. */
export function fromJSONSchema(): never {
  throw new Error("zod's fromJSONSchema() is not in this hookbox bundle");
}
