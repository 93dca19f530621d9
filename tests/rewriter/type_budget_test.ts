/**
 * The function types a thread hands to the engine are budgeted: V8 keeps every
 * distinct type it has seen for the life of the process and ends the process
 * past about 1.9 million of them (`_type_budget.ts`). These tests only count;
 * they never hand the engine the modules, so they add nothing to its table.
 */
import assert from "node:assert/strict";
import {
  admittedTypes,
  admitTypes,
  inspectModule,
  MAX_MODULE_TYPES,
  MAX_PROCESS_TYPES,
} from "../../packages/rewriter/mod.ts";
import { isHookboxError } from "../../packages/core/errors.ts";
import { manyTypes } from "./_modules.ts";

Deno.test("a module may declare at most MAX_MODULE_TYPES types", () => {
  admitTypes(manyTypes(1, MAX_MODULE_TYPES - 1)); // and the one of `_start`
  assert.throws(
    () => admitTypes(manyTypes(2, MAX_MODULE_TYPES)),
    (e) =>
      isHookboxError(e, "LIMIT_MODULE") &&
      e.message ===
        `module has ${MAX_MODULE_TYPES + 1} types, at most ${MAX_MODULE_TYPES} are allowed`,
  );
});

Deno.test("a module declaring too many types is refused from the count, before they are read", () => {
  // The count says 100,001; one type follows. Reading them all first (a repository's twenty
  // modules of 100,000 types took seconds of a hook call's deadline) would end in "malformed".
  const declared = [0xa1, 0x8d, 0x06]; // LEB128 of 100,001
  const types = [...declared, 0x60, 0, 0];
  const module = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, types.length, ...types]);
  assert.throws(
    () => inspectModule(module),
    (e) =>
      isHookboxError(e, "LIMIT_MODULE") &&
      e.message === `module has 100001 types, at most ${MAX_MODULE_TYPES} are allowed`,
  );
});

Deno.test("past the process's budget, modules with new types are refused and the others still load", () => {
  const before = admittedTypes();
  let seed = 100;
  // Fill the budget with modules of new types, as a hostile tenant or repository would.
  while (admittedTypes() + MAX_MODULE_TYPES <= MAX_PROCESS_TYPES) {
    admitTypes(manyTypes(seed++, MAX_MODULE_TYPES - 1));
  }
  assert.ok(admittedTypes() > before);
  const seen = manyTypes(100, MAX_MODULE_TYPES - 1);
  assert.throws(
    () => admitTypes(manyTypes(seed, MAX_MODULE_TYPES - 1)),
    (e) =>
      isHookboxError(e, "LIMIT_MODULE") &&
      /function types this process has not seen; .* restart the process to count again$/.test(
        e.message,
      ),
  );
  // A module whose types were all seen before costs nothing and loads.
  admitTypes(seen);
  assert.ok(admittedTypes() <= MAX_PROCESS_TYPES);
});
