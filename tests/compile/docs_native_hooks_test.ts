/**
 * The C and Rust hooks of docs/writing-hooks.md ("Hooks in other languages")
 * compile with the commands given there and block a force push through
 * `hookbox dispatch`, as written.
 */
import assert from "node:assert/strict";
import { runCli } from "../_cli.ts";
import { ROOT, tempDir } from "../_helpers.ts";

const DOC = await Deno.readTextFile(`${ROOT}/docs/writing-hooks.md`);

/** The first fenced block of `lang` after `heading` and the first `sh` block after that. */
function blocks(heading: string, lang: string): { source: string; command: string } {
  const at = DOC.indexOf(`## ${heading}\n`);
  assert.ok(at >= 0, heading);
  const take = (kind: string, from: number) => {
    const open = DOC.indexOf("```" + kind + "\n", from);
    assert.ok(open >= 0, `a ${kind} block after ${from}`);
    const close = DOC.indexOf("\n```\n", open);
    return { text: DOC.slice(open + kind.length + 4, close + 1), end: close };
  };
  const source = take(lang, at);
  return { source: source.text, command: take("sh", source.end).text.trim() };
}

/** Builds a hook folder with `command` in `dir`, then checks it blocks only a force push. */
async function buildsAndBlocks(
  dir: string,
  file: string,
  { source, command }: { source: string; command: string },
  env: Record<string, string> = {},
): Promise<void> {
  await Deno.mkdir(`${dir}/no-force-push`);
  await Deno.writeTextFile(`${dir}/${file}`, source);
  await Deno.writeTextFile(
    `${dir}/no-force-push/HOOK.md`,
    "---\nname: no-force-push\ndescription: native\ntrigger: pre-tool-call\n---\n",
  );
  const built = await new Deno.Command("bash", { args: ["-c", command], cwd: dir, env }).output();
  assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
  const event = (command: string) =>
    JSON.stringify({
      event_type: "pre-tool-call",
      session_id: "s",
      tool_name: "Bash",
      tool_input: { command },
    });
  const blocked = await runCli(["dispatch", "--hooks-dir", dir], {
    cwd: dir,
    stdin: event("git push --force origin main"),
  });
  assert.equal(blocked.code, 2, blocked.stderr);
  assert.equal(blocked.stderr.trim(), "force pushes are not allowed");
  const allowed = await runCli(["dispatch", "--hooks-dir", dir], {
    cwd: dir,
    stdin: event("git push origin main"),
  });
  assert.equal(allowed.code, 0, allowed.stderr);
}

Deno.test("the C hook of docs/writing-hooks.md compiles as written and blocks a force push", async () => {
  const dir = await tempDir("hookbox-c-hook-");
  try {
    const c = blocks("Hooks in other languages", "c");
    assert.match(c.command, /^clang /);
    await buildsAndBlocks(dir, "run.c", c);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the Rust hook of docs/writing-hooks.md compiles as written and blocks a force push", async () => {
  const dir = await tempDir("hookbox-rust-hook-");
  try {
    const rust = blocks("Hooks in other languages", "rust");
    assert.match(rust.command, /^rustc .*-C strip=symbols/);
    // Debian's rustc (the one the document names, with its wasm32-wasi standard library)
    // before a rustup toolchain that may sit earlier on PATH without that target.
    const path = `/usr/bin:${Deno.env.get("PATH") ?? ""}`;
    await buildsAndBlocks(dir, "run.rs", rust, { PATH: path });
    const size = (await Deno.stat(`${dir}/no-force-push/plugin.wasm`)).size;
    assert.ok(size < 4 * 1024 * 1024, `${size} bytes: under the 4 MiB module cap`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
