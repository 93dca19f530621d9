/**
 * Stands in for npm `@extism/extism` in an edge Worker none of whose plugins
 * is loaded through it (see `NO_EXTISM_SDK`): loading one that is fails
 * loudly.
 *
 * @module
 */
/** Not in this bundle. */
export default function createPlugin(): never {
  throw new Error(
    "this edge bundle has no Extism SDK: none of its plugins needed it when it was built; bundle again",
  );
}
