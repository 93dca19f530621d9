/**
 * hookbox's version: the `version` of `@hookbox/hookbox`
 * (`packages/hookbox/deno.json`; `tests/core_test.ts` holds the two equal).
 *
 * @module
 */

/** The version of hookbox. */
export const VERSION = "0.1.0";
