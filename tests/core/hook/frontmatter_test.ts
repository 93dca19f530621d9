import assert from "node:assert/strict";
import { isHookboxError } from "../../../packages/core/errors.ts";
import { parseHookMd } from "../../../packages/core/hook/frontmatter.ts";

const GOOD = "---\nname: a\ndescription: d\ntrigger: pre-tool-call\n---\n";

Deno.test("`parseHookMd()` splits frontmatter and Markdown body", () => {
  const doc = parseHookMd(`${GOOD}\n# Title\n\nBe careful.\n`);
  assert.equal(doc.manifest.name, "a");
  assert.equal(doc.body, "# Title\n\nBe careful.");
});

Deno.test("`parseHookMd()` rejects a HOOK.md without frontmatter", () => {
  for (const text of ["# just markdown\n", "name: a\ndescription: d\n", "---\nname: a\n", ""]) {
    assert.throws(
      () => parseHookMd(text, "/h/a/HOOK.md"),
      (err) => isHookboxError(err, "HOOK_MANIFEST_INVALID") && err.path === "/h/a/HOOK.md",
      JSON.stringify(text),
    );
  }
});

Deno.test("`parseHookMd()` rejects frontmatter that is not valid YAML", () => {
  const text = "---\nname: a\ndescription: [unclosed\ntrigger: pre-tool-call\n---\n";
  assert.throws(
    () => parseHookMd(text, "/h/a/HOOK.md"),
    (err) => isHookboxError(err, "HOOK_MANIFEST_INVALID") && err.path === "/h/a/HOOK.md",
  );
});

Deno.test("`parseHookMd()` rejects frontmatter that is not a mapping", () => {
  assert.throws(
    () => parseHookMd("---\n- a\n- b\n---\n"),
    (err) => isHookboxError(err, "HOOK_MANIFEST_INVALID"),
  );
});

Deno.test("`parseHookMd()` accepts CRLF line endings and a byte-order mark", () => {
  const doc = parseHookMd(
    "\uFEFF---\r\nname: a\r\ndescription: d\r\ntrigger: pre-tool-call\r\n---\r\nBody\r\n",
  );
  assert.equal(doc.manifest.name, "a");
  assert.equal(doc.body, "Body");
});

/** The message `parseHookMd(text)` throws. */
function messageOf(text: string): string {
  try {
    parseHookMd(text, "/h/a/HOOK.md");
  } catch (err) {
    assert.ok(isHookboxError(err, "HOOK_MANIFEST_INVALID"), String(err));
    return err.message;
  }
  throw new Error("no error");
}

Deno.test("invalid YAML is reported at its HOOK.md line and column, with the line and a caret", () => {
  const message = messageOf(
    "---\nname: a\ndescription: d\ntrigger: pre-tool-call\nmatcher:\n  tool: [unclosed\n---\n",
  );
  assert.match(message, /^frontmatter is not valid YAML at line 6, column 18: /);
  assert.match(message, /\n6 \| {3}tool: \[unclosed\n {2}\| {18}\^$/);
});

Deno.test("a misspelt key names the key it probably is; a matcher string names the shape", () => {
  assert.match(
    messageOf(`${GOOD.slice(0, -4)}timout: 100\n---\n`),
    /"timout"; did you mean "timeout"\?/,
  );
  assert.match(
    messageOf(`${GOOD.slice(0, -4)}limits:\n  memory: 3\n---\n`),
    /field "limits" unknown key\(s\) "memory"; did you mean "memory_mb"\?/,
  );
  assert.match(
    messageOf(`${GOOD.slice(0, -4)}matcher: Bash\n---\n`),
    /field "matcher" must be a mapping of regular expressions: \{tool: "\^Bash\$", pattern: .*\}/,
  );
});
