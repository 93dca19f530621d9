import assert from "node:assert/strict";
import { HookboxError } from "../../src/errors.ts";
import { isPatched, PATCHES, patchSource } from "../../src/compile/_js_patches.ts";
import { QUICKJS_DIR } from "../../src/compile/_js_toolchain_deno.ts";

Deno.test("patchSource() applies every QuickJS patch to the pinned sources exactly once", async () => {
  for (const file of new Set(PATCHES.map((p) => p.file))) {
    const original = await Deno.readTextFile(`${QUICKJS_DIR}/${file}`);
    const patched = patchSource(file, original);
    for (const patch of PATCHES.filter((p) => p.file === file)) {
      assert.ok(patched.includes(patch.replace), patch.why);
    }
    assert.ok(isPatched(file));
  }
  assert.equal(patchSource("cutils.c", "int x;"), "int x;", "files without patches are unchanged");
  assert.ok(!isPatched("cutils.c"));
});

Deno.test("patchSource() refuses a QuickJS source that lacks a patch's text", () => {
  assert.throws(
    () => patchSource("libregexp.c", "/* some other release */"),
    (err: unknown) =>
      err instanceof HookboxError && err.code === "COMPILE_FAILED" &&
      /cannot apply the QuickJS patch/.test(err.message),
  );
});
