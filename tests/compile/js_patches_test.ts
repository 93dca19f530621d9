import assert from "node:assert/strict";
import { HookboxError } from "../../packages/core/errors.ts";
import {
  applyPatch,
  isPatched,
  PATCH_DIR,
  PATCHED_FILES,
  patchSource,
} from "../../packages/compile/_js_patches.ts";
import { QUICKJS_DIR } from "../../packages/compile/_js_toolchain.ts";

Deno.test("patchSource() applies every QuickJS patch file to the pinned sources", async () => {
  for (const file of PATCHED_FILES) {
    const original = await Deno.readTextFile(`${QUICKJS_DIR}/${file}`);
    const patched = await patchSource(file, original);
    const patch = await Deno.readTextFile(`${PATCH_DIR}${file}.patch`);
    // Every added line is there, every removed one gone (where it is not also elsewhere).
    const added = patch.split("\n").filter((l) => l.startsWith("+") && !l.startsWith("+++"));
    for (const line of added) assert.ok(patched.includes(line.slice(1)), `${file}: ${line}`);
    assert.ok(patched.includes("hookbox: see plugins/engine/patches/"), file);
    assert.notEqual(patched, original);
    assert.ok(isPatched(file));
  }
  assert.equal(await patchSource("cutils.c", "int x;"), "int x;", "files without patches stay");
  assert.ok(!isPatched("cutils.c"));
});

Deno.test("applyPatch() applies hunks strictly and refuses a source they do not fit", () => {
  const patch = "header text\n--- a/x.c\n+++ b/x.c\n@@ -2,2 +2,3 @@\n b\n-c\n+C\n+D\n";
  assert.equal(applyPatch("a\nb\nc\nd\n", patch, "x.c"), "a\nb\nC\nD\nd\n");
  for (const other of ["a\nb\nX\nd\n", "b\nc\n", "/* some other release */"]) {
    assert.throws(
      () => applyPatch(other, patch, "x.c"),
      (err: unknown) =>
        err instanceof HookboxError && err.code === "COMPILE_FAILED" &&
        /cannot apply the QuickJS patch of x\.c/.test(err.message),
    );
  }
});
