import assert from "node:assert/strict";
import { ROOT } from "./_helpers.ts";

Deno.test("`deno task demo` blocks, redacts, marks, gates and contains a runaway hook", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/scripts/demo.ts`],
    cwd: ROOT,
    env: { NO_COLOR: "1", HOOKBOX_CACHE_DIR: `${ROOT}/.cache/test-plugins` },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.match(text, /a safe command \(pre-tool-call\) → ALLOW/);
  assert.match(text, /a destructive command \(pre-tool-call\) → BLOCK\n {2}reason: shell-guard: /);
  assert.match(text, /\[REDACTED:aws_access_key\]/);
  assert.match(text, /UNTRUSTED CONTENT from WebFetch/);
  assert.match(text, /runaway-loop \[wasm\] limit \(fuel: \d+ instructions \(limits\.fuel/);
  assert.match(text, /stop with failing tests \(pre-agent-turn-stop\) → BLOCK/);
  assert.doesNotMatch(text, /\[subprocess\]|skipped/, "the demo runs without subprocesses");
});
