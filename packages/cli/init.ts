/**
 * `hookbox init NAME --lang js|ts|as [--dir DIR]`: writes a working hook
 * folder — HOOK.md, the entry in the language asked for and two test cases —
 * that `hookbox test` passes as written. The hook blocks `git push --force`
 * and allows everything else; edit it from there.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { absolute, denoFs } from "../host-deno/fs.ts";
import { writeAtomic } from "../host-deno/atomic.ts";
import { EXIT, UsageError } from "./_io.ts";
import { parseOptions, usageLine } from "./commands.ts";

/** The languages `init` writes, with the entry file each uses. */
const ENTRIES = {
  js: "scripts/run.mjs",
  ts: "scripts/run.ts",
  as: "scripts/run.as.ts",
} as const;

type Lang = keyof typeof ENTRIES;

const JS = `// A function-style hook: evaluated once when the plugin is built; each call
// runs only this function with the parsed event (docs/writing-hooks.md).
const FORCE_PUSH = /\\bgit\\s+push\\b.*(--force\\b|\\s-f\\b)/;

export default function (event) {
  const command = event.tool_input?.command ?? "";
  if (FORCE_PUSH.test(command)) {
    return { decision: "block", reason: "force pushes are not allowed" };
  }
}
`;

const TS = `// A function-style hook in TypeScript (bundled by esbuild, then compiled to
// WebAssembly): each call runs only this function with the parsed event.
interface ToolEvent {
  event_type: string;
  tool_name?: string;
  tool_input?: { command?: string };
}

const FORCE_PUSH = /\\bgit\\s+push\\b.*(--force\\b|\\s-f\\b)/;

export default function (event: ToolEvent) {
  const command = event.tool_input?.command ?? "";
  if (FORCE_PUSH.test(command)) {
    return { decision: "block", reason: "force pushes are not allowed" };
  }
}
`;

const AS = `// deno-fmt-ignore-file -- AssemblyScript source.
// An AssemblyScript hook against the hookbox library (plugins/as/): return
// ALLOW, or block(reason).
import { ALLOW, block, input, json } from "hookbox";

export function hook(): i32 {
  const command = json.getString(input.text(), ["tool_input", "command"]);
  if (command === null) return ALLOW;
  if (command.startsWith("git push") && (command.includes(" --force") || command.includes(" -f"))) {
    return block("force pushes are not allowed");
  }
  return ALLOW;
}
`;

const SOURCES: Record<Lang, string> = { js: JS, ts: TS, as: AS };

/** Runs the command; returns the exit code. */
export async function initCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("init"),
    allowPositionals: true,
    strict: true,
  });
  const name = positionals[0];
  if (name === undefined || positionals.length > 1) {
    throw new UsageError(`name one hook; usage: ${usageLine("init")}`);
  }
  if (!/^[a-z0-9-]+$/.test(name) || name.length > 64) {
    throw new UsageError(`"${name}" is not a hook name: lowercase letters, digits and -, ≤ 64`);
  }
  const lang = values.lang;
  if (!(lang in ENTRIES)) {
    throw new UsageError(`--lang must be one of ${Object.keys(ENTRIES).join(", ")}, not ${lang}`);
  }
  const dir = absolute(`${values.dir}/${name}`);
  if ((await denoFs.stat(dir)) !== null) {
    throw new UsageError(`${dir} already exists; pick another name or --dir`);
  }
  const files: Record<string, string> = {
    "HOOK.md": hookMd(name, lang as Lang),
    [ENTRIES[lang as Lang]]: SOURCES[lang as Lang],
    "tests/blocks-force-push.json": testCase(
      "a force push is blocked",
      "git push --force origin main",
      { decision: "block", reason_contains: "force pushes" },
    ),
    "tests/allows-other-commands.json": testCase(
      "anything else is allowed",
      "git push origin main",
      { decision: "allow", outcome: "ok" },
    ),
  };
  for (const [path, text] of Object.entries(files)) {
    const file = `${dir}/${path}`;
    await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
    await writeAtomic(file, new TextEncoder().encode(text));
  }
  console.log(`wrote ${dir}: ${Object.keys(files).join(", ")}`);
  console.log(`next: hookbox test ${dir}`);
  return EXIT.allow;
}

function hookMd(name: string, lang: Lang): string {
  const language = { js: "JavaScript", ts: "TypeScript", as: "AssemblyScript" }[lang];
  return `---
name: ${name}
description: Blocks git push --force before the shell tool runs it.
trigger: pre-tool-call
matcher:
  tool: "^(Bash|Shell|bash|shell)$"
timeout: 5000
on_error: closed
---

# ${name}

A ${language} hook made by \`hookbox init\`. It reads \`tool_input.command\` and blocks a force push
with a reason; anything else is allowed. \`on_error: closed\` makes any failure of the hook a block.
Test it with \`hookbox test\`; the cases are in \`tests/\`.
`;
}

function testCase(description: string, command: string, expect: Record<string, string>): string {
  const event = { tool_name: "Bash", tool_input: { command } };
  return JSON.stringify({ description, event, expect }, null, 2) + "\n";
}
