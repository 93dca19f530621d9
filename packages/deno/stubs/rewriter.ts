/**
 * Stands in for the module rewriter (`packages/rewriter/mod.ts`) in an edge Worker
 * (see `NO_REWRITER`): the Worker loads plugins prepared by `hookbox
 * bundle`, so the runtime keeps only the rewriter's constants; inspecting or
 * instrumenting a module there fails loudly. The type checker sees this file:
 * a constant the runtime needs that moves in the rewriter breaks it.
 *
 * @module
 */
export {
  blockMapPages,
  HOOKBOX_EXPORTS,
  MAX_TABLE_ENTRIES,
  TABLE_ENTRY_BYTES,
  WRITE_BLOCK_SHIFT,
  WRITE_STRADDLE,
} from "../../rewriter/shared.ts";

const absent = (): never => {
  throw new Error("an edge Worker loads prepared plugins only: it has no module rewriter");
};
/** Not in an edge Worker. */
export const inspectModule = absent;
/** Not in an edge Worker. */
export const instrumentModule = absent;
/** Not in an edge Worker. */
export const splitData = absent;
