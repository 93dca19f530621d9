/**
 * Stands in for npm `re2js` in an edge Worker whose matchers are all plain
 * words (see `NO_REGEX_ENGINE`): compiling a pattern that needs the engine
 * fails loudly.
 *
 * @module
 */
/** Not in this bundle. */
export const RE2JS = {
  compile(): never {
    throw new Error(
      "this edge bundle has no regex engine: its matchers were all plain words when it was built; bundle again",
    );
  },
};
