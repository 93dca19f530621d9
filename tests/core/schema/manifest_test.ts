import assert from "node:assert/strict";
import { isHookboxError } from "../../../packages/core/errors.ts";
import { parseHookMd } from "../../../packages/core/hook/frontmatter.ts";
import { hookMd } from "../../_helpers.ts";
import { compiledMatcher, compileMatcher } from "../../../packages/core/schema/matcher.ts";
import { estimateProgram } from "../../../packages/core/schema/_matcher_size.ts";

function parse(frontmatter: Record<string, unknown>) {
  return parseHookMd(hookMd({ name: "a-hook", ...frontmatter }), "/x/a-hook/HOOK.md").manifest;
}

function rejects(frontmatter: Record<string, unknown>, field: string): void {
  assert.throws(
    () => parse(frontmatter),
    (err) => {
      assert.ok(isHookboxError(err, "HOOK_MANIFEST_INVALID"), String(err));
      assert.equal(err.field, field, JSON.stringify(frontmatter));
      assert.equal(err.path, "/x/a-hook/HOOK.md");
      return true;
    },
  );
}

Deno.test("`manifestSchema` fills the SPEC §2 defaults", () => {
  const m = parse({});
  assert.equal(m.timeout, 30000);
  assert.equal(m.async, false);
  assert.equal(m.priority, 100);
  assert.equal(m.on_error, "open");
  assert.equal(m.matcher, undefined);
  assert.deepEqual(m.trigger, ["pre-tool-call"]);
});

Deno.test("`manifestSchema` accepts the range bounds of timeout and priority", () => {
  assert.equal(parse({ timeout: 100 }).timeout, 100);
  assert.equal(parse({ timeout: 600000 }).timeout, 600000);
  assert.equal(parse({ priority: 0 }).priority, 0);
  assert.equal(parse({ priority: 1000 }).priority, 1000);
  assert.equal(parse({ on_error: "closed" }).on_error, "closed");
  assert.equal(parse({ async: true }).async, true);
});

Deno.test("`manifestSchema` rejects out-of-range values naming the field", () => {
  rejects({ timeout: 99 }, "timeout");
  rejects({ timeout: 600001 }, "timeout");
  rejects({ timeout: "fast" }, "timeout");
  rejects({ priority: -1 }, "priority");
  rejects({ priority: 1001 }, "priority");
  rejects({ priority: 1.5 }, "priority");
  rejects({ async: "yes" }, "async");
  rejects({ on_error: "ignore" }, "on_error");
  rejects({ limits: { output_kb: 0 } }, "limits.output_kb");
});

Deno.test("`manifestSchema` requires name, description and trigger", () => {
  for (const field of ["name", "description", "trigger"]) {
    const text = hookMd({ name: "a-hook" }).replace(new RegExp(`^${field}:.*\\n`, "m"), "");
    assert.throws(
      () => parseHookMd(text),
      (err) => isHookboxError(err, "HOOK_MANIFEST_INVALID") && err.field === field,
    );
  }
});

Deno.test("`manifestSchema` checks the name against [a-z0-9-]+", () => {
  for (const name of ["Block-Rm", "block_rm", "block rm", "", "ünï"]) {
    rejects({ name }, "name");
  }
  assert.equal(parse({ name: "block-rm-2" }).name, "block-rm-2");
});

Deno.test("`manifestSchema` rejects an invalid regex in the matcher naming the field", () => {
  rejects({ matcher: { tool: "(Bash" } }, "matcher.tool");
  rejects({ matcher: { pattern: "[a-" } }, "matcher.pattern");
  assert.deepEqual(parse({ matcher: { tool: "^Bash$", pattern: "rm\\s+-rf" } }).matcher, {
    tool: "^Bash$",
    pattern: "rm\\s+-rf",
  });
});

Deno.test("`manifestSchema` rejects an unknown trigger and accepts a list and aliases", () => {
  rejects({ trigger: "pre-tool-use" }, "trigger");
  rejects({ trigger: [] }, "trigger");
  assert.deepEqual(parse({ trigger: "pre_tool_call" }).trigger, ["pre-tool-call"]);
  assert.deepEqual(parse({ trigger: ["pre-tool-call", "post_tool_call"] }).trigger, [
    "pre-tool-call",
    "post-tool-call",
  ]);
  assert.throws(
    () => parse({ trigger: ["pre-tool-call", "nope"] }),
    (err) =>
      isHookboxError(err, "HOOK_MANIFEST_INVALID") && (err.field ?? "").startsWith("trigger"),
  );
});

Deno.test("`manifestSchema` refuses a matcher RE2 would write out too big, before compiling it", () => {
  // 40 copies of a group repeated 990 times: ~158,000 instructions, ~290 ms to compile.
  const huge = "(\\pL|\\pN|\\pP|\\pS){1,990}".repeat(40).slice(0, 1000);
  const unique = `(?:${crypto.randomUUID().replaceAll("-", "")})?`;
  for (const pattern of [huge, `${unique}a{1000}${"a{1000}".repeat(10)}`]) {
    assert.throws(
      () => parse({ matcher: { pattern } }),
      (err) => {
        assert.ok(isHookboxError(err, "HOOK_MANIFEST_INVALID"), String(err));
        assert.equal(err.field, "matcher.pattern");
        assert.match(
          err.message,
          /too big: RE2 writes this pattern out to about \d+ instructions, at most 4096/,
        );
        return true;
      },
    );
    // Refused from its text: never compiled.
    assert.equal(compiledMatcher(pattern), undefined);
  }
  // Big patterns within the limit are taken.
  for (const pattern of ["\\p{Greek}{0,900}x", "[\\pL\\pN\\pP\\pS]{1,990}", "(?i)[a-z]{0,1000}"]) {
    assert.equal(parse({ matcher: { pattern } }).matcher?.pattern, pattern);
  }
});

Deno.test("estimateProgram is within a factor of RE2's own program size", () => {
  const patterns = [
    "rm\\s+-rf",
    "(?i)(curl|wget).*\\|\\s*(ba)?sh",
    "\\pL{0,500}a[ab]{25}[^ab]",
    "(?:a{0,30}){30}",
    "[\\p{L}\\p{N}]{1000}",
    "(?i)(?:abc|def|ghi){60}",
    "\\p{Greek}{0,900}x",
    "(?i)[a-z]{0,1000}",
    "(\\pL|\\pN|\\pP|\\pS){1,990}",
    "[^x]{1000}y",
    ".{1000}",
    "x{2,}",
    "[]a]{100}",
    "(a?){500}",
    "((a|b)(c|d)){200}",
    "(?:\\b\\w+\\b\\s*){100}",
    "\\Qa.b\\E{3}",
    "(?i)(?:[[:alpha:]]{5}){20}",
    "a{1000}".repeat(140).slice(0, 1020),
  ];
  for (const pattern of patterns) {
    const actual = compileMatcher(pattern, { keep: false }).instructions;
    const estimate = estimateProgram(pattern);
    assert.ok(
      estimate >= 0.7 * actual && estimate <= 8 * actual,
      `${pattern}: ${estimate} vs ${actual}`,
    );
  }
});
