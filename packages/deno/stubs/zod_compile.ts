/**
 * Stands in for zod's `v4/core/compile.js` in hookbox's bundles (see
 * `ZOD_TRIMMED`): schema compilation needs `new Function`, refused in edge
 * Workers anyway, and nothing in hookbox calls it.
 *
 * @module
 */
const absent = (): never => {
  throw new Error("zod's compile() is not in this hookbox bundle");
};
/** As zod's. */
export const INVALID = Symbol.for("zod.compile.invalid");
/** As zod's. */
export class ZodCompileAsyncError extends Error {}
/** As zod's. */
export class ZodCompileUnsupportedError extends Error {}
/** Not in this bundle. */
export const compile = absent;
/** Not in this bundle. */
export const withParser = absent;
/** Not in this bundle. */
export const compileFn = absent;
