/**
 * `hookbox validate` loads `.wasm` plugins the way the runtime does and
 * reports refusals with code, path and field.
 */
import assert from "node:assert/strict";
import { tempTree } from "../_helpers.ts";
import { runCli } from "../_cli.ts";
import { GARBAGE, pluginBytes, writePluginHook } from "../integration/_plugins.ts";

async function validate(root: string, dirs: string[]) {
  const env = { XDG_CONFIG_HOME: `${root}/config` };
  return await runCli(["validate", ...dirs], { cwd: root, env });
}

/** The output line that names `path`. */
function lineWith(text: string, path: string): string {
  return text.split("\n").find((l) => l.includes(path)) ?? "";
}

Deno.test("`hookbox validate` reports a plugin.wasm import outside the allowed set", async () => {
  await using tree = await tempTree();
  const hooks = await tree.dir("hooks");
  const socket = await writePluginHook(hooks, "socket", await pluginBytes("bad_import"));
  const env = await writePluginHook(hooks, "env", await pluginBytes("bad_import_env"));
  const user = await writePluginHook(hooks, "user", await pluginBytes("bad_import_extism"));
  await writePluginHook(hooks, "guard", await pluginBytes("guard_wasi"));
  const run = await validate(tree.root, [hooks]);
  assert.equal(run.code, 1, run.stdout + run.stderr);
  assert.match(
    lineWith(run.stdout, `${socket}/plugin.wasm`),
    /^PLUGIN_IMPORT_DENIED \S+ field wasi_snapshot_preview1\.sock_accept: .*not allowed/,
  );
  assert.match(
    lineWith(run.stdout, `${env}/plugin.wasm`),
    /^PLUGIN_IMPORT_DENIED \S+ field env\.system:/,
  );
  assert.match(
    lineWith(run.stdout, `${user}/plugin.wasm`),
    /^PLUGIN_IMPORT_DENIED \S+ field extism:host\/user\.exec:/,
  );
  assert.match(run.stdout, /^ok guard /m);
  assert.match(run.stdout, /1 hook\(s\) valid, 3 problem\(s\)/);
});

Deno.test("`hookbox validate` reports garbage, a missing export and a SHA-256 pin mismatch", async () => {
  await using tree = await tempTree();
  const hooks = await tree.dir("hooks");
  const garbage = await writePluginHook(hooks, "garbage", GARBAGE);
  // A valid module that exports neither `hook` nor `_start`.
  const empty = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const noExport = await writePluginHook(hooks, "no-export", empty);
  const pinned = await writePluginHook(hooks, "pinned", await pluginBytes("guard_wasi"), {
    sha256: "0".repeat(64),
  });
  const run = await validate(tree.root, [hooks]);
  assert.equal(run.code, 1, run.stdout + run.stderr);
  assert.match(lineWith(run.stdout, `${garbage}/plugin.wasm`), /^PLUGIN_INVALID /);
  assert.match(lineWith(run.stdout, `${noExport}/plugin.wasm`), /^PLUGIN_EXPORT_MISSING /);
  assert.match(
    lineWith(run.stdout, `${pinned}/plugin.wasm`),
    /^PLUGIN_HASH_MISMATCH \S+ field sha256:/,
  );
  assert.match(run.stdout, /0 hook\(s\) valid, 3 problem\(s\)/);
});

Deno.test("`hookbox validate` accepts valid plugins of both ABIs and a matching pin", async () => {
  await using tree = await tempTree();
  const hooks = await tree.dir("hooks");
  const bytes = await pluginBytes("guard_wasi");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  const sha256 = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  await writePluginHook(hooks, "wasi", bytes, { sha256 });
  await writePluginHook(hooks, "extism", await pluginBytes("guard_extism"));
  const run = await validate(tree.root, [hooks]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /^ok wasi /m);
  assert.match(run.stdout, /^ok extism /m);
  assert.match(run.stdout, /2 hook\(s\) valid, 0 problem\(s\)/);
});

Deno.test("`hookbox validate` compiles JS hooks and reports a denied Node API", async () => {
  await using tree = await tempTree();
  const hooks = await tree.dir("hooks");
  const frontmatter = { description: "d", trigger: "pre-tool-call" };
  const bad = await tree.hook("hooks", "spawns", {
    frontmatter,
    files: { "scripts/run.js": 'require("child_process").execSync("id");\n' },
  });
  await tree.hook("hooks", "fine", {
    frontmatter,
    files: { "scripts/run.js": 'JSON.parse(require("fs").readFileSync(0, "utf8"));\n' },
  });
  const run = await runCli(["validate", hooks], {
    cwd: tree.root,
    env: { XDG_CONFIG_HOME: `${tree.root}/config`, HOOKBOX_CACHE_DIR: `${tree.root}/cache` },
  });
  assert.equal(run.code, 1, run.stdout + run.stderr);
  assert.match(lineWith(run.stdout, bad), /^COMPILE_API_DENIED \S+.*child_process/);
  assert.match(run.stdout, /^ok fine /m);
  assert.match(run.stdout, /1 hook\(s\) valid, 1 problem\(s\)/);
});
