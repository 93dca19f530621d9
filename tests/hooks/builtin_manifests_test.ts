/**
 * The HOOK.md of every built-in hook parses and says what its hook needs.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { parseHookMd } from "../../packages/core/hook/frontmatter.ts";

const EXPECTED = [
  { name: "shell-guard", trigger: "pre-tool-call", priority: 900, onError: "closed", tool: true },
  {
    name: "secret-redactor",
    trigger: "post-tool-call",
    priority: 500,
    onError: "closed",
    tool: false,
  },
  {
    name: "injection-marker",
    trigger: "post-tool-call",
    priority: 400,
    onError: "closed",
    tool: true,
  },
  {
    name: "stop-gate",
    trigger: "pre-agent-turn-stop",
    priority: 100,
    onError: "open",
    tool: false,
  },
];

function read(name: string): string {
  return Deno.readTextFileSync(new URL(`../../hooks/${name}/HOOK.md`, import.meta.url));
}

for (const want of EXPECTED) {
  Deno.test(`parseHookMd() accepts hooks/${want.name}/HOOK.md`, () => {
    const { manifest, body } = parseHookMd(read(want.name), `hooks/${want.name}/HOOK.md`);
    strictEqual(manifest.name, want.name);
    deepStrictEqual(manifest.trigger, [want.trigger]);
    strictEqual(manifest.priority, want.priority);
    strictEqual(manifest.on_error, want.onError);
    strictEqual(manifest.async, false);
    strictEqual(manifest.matcher?.tool !== undefined, want.tool);
    strictEqual(body.startsWith(`# ${want.name}`), true);
  });
}

Deno.test("shell-guard matcher fits the shell tools and nothing else", () => {
  const { manifest } = parseHookMd(read("shell-guard"));
  const tool = new RegExp(manifest.matcher?.tool ?? "");
  for (const name of ["Shell", "Bash", "shell", "bash", "run_shell_command", "exec"]) {
    strictEqual(tool.test(name), true, name);
  }
  for (const name of ["Read", "BashHistory", "WebFetch"]) strictEqual(tool.test(name), false, name);
});

Deno.test("injection-marker matcher fits the fetch tools", () => {
  const { manifest } = parseHookMd(read("injection-marker"));
  const tool = new RegExp(manifest.matcher?.tool ?? "");
  for (const name of ["WebFetch", "web_fetch", "fetch", "Browser", "read_url", "WebSearch"]) {
    strictEqual(tool.test(name), true, name);
  }
  strictEqual(tool.test("Bash"), false);
});
