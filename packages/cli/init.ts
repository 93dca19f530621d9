/**
 * `hookbox init NAME --lang js|ts|as|c|rust [--dir DIR]`: writes a working
 * hook folder — HOOK.md, the entry in the language asked for and two test
 * cases — that `hookbox test` passes as written (for C and Rust, once
 * `build.sh` has compiled `plugin.wasm`). The hook blocks `git push --force`
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
  c: "src/run.c",
  rust: "src/main.rs",
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

const C = `/* A WASI command: reads the event JSON on stdin, blocks a force push (exit 2, the
 * reason on stderr), allows anything else (exit 0). Built to plugin.wasm by build.sh. */
#include <stdio.h>
#include <string.h>

int main(void) {
  static char event[1 << 20];
  size_t n = fread(event, 1, sizeof event - 1, stdin);
  event[n] = '\\0';
  if (strstr(event, "git push") && (strstr(event, " --force") || strstr(event, " -f"))) {
    fputs("force pushes are not allowed", stderr);
    return 2;
  }
  return 0;
}
`;

const RUST = `//! A WASI command: reads the event JSON on stdin, blocks a force push (exit 2, the
//! reason on stderr), allows anything else (exit 0). Built to plugin.wasm by build.sh.
use std::io::{self, Read, Write};

fn main() {
    let mut event = String::new();
    if io::stdin().read_to_string(&mut event).is_err() {
        std::process::exit(1);
    }
    if event.contains("git push") && (event.contains(" --force") || event.contains(" -f")) {
        let _ = io::stderr().write_all(b"force pushes are not allowed");
        std::process::exit(2);
    }
}
`;

const SOURCES: Record<Lang, string> = { js: JS, ts: TS, as: AS, c: C, rust: RUST };

/** The build scripts of the languages compiled outside hookbox (docs/writing-hooks.md). */
const BUILDS: Partial<Record<Lang, string>> = {
  c: `#!/bin/sh
# Debian: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32
set -e
cd "$(dirname "$0")"
clang --target=wasm32-wasi --sysroot=/usr -O2 -o plugin.wasm src/run.c
`,
  rust: `#!/bin/sh
# Debian: apt-get install rustc libstd-rust-dev-wasm32 (with rustup: rustup target add
# wasm32-wasip1, and --target wasm32-wasip1 below). -C strip=symbols keeps the module
# under the 4 MiB module cap.
set -e
cd "$(dirname "$0")"
rustc --edition 2021 --target wasm32-wasi -C opt-level=s -C strip=symbols -o plugin.wasm src/main.rs
`,
};

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
  const build = BUILDS[lang as Lang];
  if (build !== undefined) files["build.sh"] = build;
  for (const [path, text] of Object.entries(files)) {
    const file = `${dir}/${path}`;
    await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true });
    await writeAtomic(file, new TextEncoder().encode(text));
    if (path === "build.sh") await Deno.chmod(file, 0o755);
  }
  console.log(`wrote ${dir}: ${Object.keys(files).join(", ")}`);
  console.log(
    build === undefined
      ? `next: hookbox test ${dir}`
      : `next: ${dir}/build.sh && hookbox test ${dir}`,
  );
  return EXIT.allow;
}

function hookMd(name: string, lang: Lang): string {
  const language = {
    js: "JavaScript",
    ts: "TypeScript",
    as: "AssemblyScript",
    c: "C",
    rust: "Rust",
  }[lang];
  const built = lang === "c" || lang === "rust"
    ? " `build.sh` compiles it to `plugin.wasm`, the module that runs."
    : "";
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
with a reason; anything else is allowed. \`on_error: closed\` makes any failure of the hook a block.${built}
Test it with \`hookbox test\`; the cases are in \`tests/\`.
`;
}

function testCase(description: string, command: string, expect: Record<string, string>): string {
  const event = { tool_name: "Bash", tool_input: { command } };
  return JSON.stringify({ description, event, expect }, null, 2) + "\n";
}
