import assert from "node:assert/strict";
import { runCli } from "../_cli.ts";
import { ROOT, sh, tempTree, toolEvent } from "../_helpers.ts";

const GUARD = `
const event = JSON.parse(require("fs").readFileSync(0, "utf8"));
if (String(event.tool_input.command).includes("VERDICT")) {
  process.stderr.write("verdict: no");
  process.exit(2);
}
`;

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("`hookbox compile` writes each plugin and prints its SHA-256 and size", async () => {
  await using tree = await tempTree();
  const js = await tree.hook("hooks", "js-guard", {
    frontmatter: { description: "d", trigger: "pre-tool-call" },
    files: { "scripts/run.js": GUARD },
  });
  const run = await runCli(
    ["compile", js, `${ROOT}/hooks/shell-guard-as`, "--out", `${tree.root}/out`],
    { cwd: tree.root, env: { HOOKBOX_CACHE_DIR: `${tree.root}/cache` } },
  );
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split("\n");
  assert.equal(lines.length, 2);
  for (const [i, name] of ["js-guard", "shell-guard-as"].entries()) {
    const line = lines[i] ?? "";
    const match = /^(\S+) sha256:([0-9a-f]{64}) (\d+) bytes (\S+)/.exec(line);
    assert.ok(match, line);
    assert.equal(match[1], name);
    const bytes = await Deno.readFile(match[4]!);
    assert.equal(match[4], `${tree.root}/out/${name}.wasm`);
    assert.equal(Number(match[3]), bytes.byteLength);
    assert.equal(match[2], await sha256(bytes));
    assert.ok(WebAssembly.validate(bytes as Uint8Array<ArrayBuffer>));
  }
});

Deno.test("`hookbox compile` refuses a hook with nothing to compile, naming it", async () => {
  await using tree = await tempTree();
  const hook = await tree.hook("hooks", "shell-only", {
    frontmatter: { description: "d", trigger: "pre-tool-call" },
    files: { "scripts/run.sh": sh("exit 0") },
  });
  const run = await runCli(["compile", hook], { cwd: tree.root });
  assert.equal(run.code, 1);
  assert.match(run.stderr.trim(), /^hookbox: COMPILE_FAILED .*shell-only.*subprocess entry/);
  assert.equal(run.stderr.trim().split("\n").length, 1);
});

Deno.test("`hookbox dispatch` compiles a JS hook on first use and recompiles it after an edit", async () => {
  await using tree = await tempTree();
  const work = await tree.dir("work");
  const hook = await tree.hook("work/.agents/hooks", "js-guard", {
    frontmatter: { description: "d", trigger: "pre-tool-call" },
    files: { "scripts/run.js": GUARD },
  });
  const env = { HOOKBOX_CACHE_DIR: `${tree.root}/cache`, XDG_CONFIG_HOME: `${tree.root}/xdg` };
  const event = JSON.stringify(toolEvent({ tool_input: { command: "echo VERDICT" } }));
  const first = await runCli(["dispatch"], { cwd: work, env, stdin: event });
  assert.equal(first.code, 2, first.stderr);
  assert.equal(first.stderr.trim(), "verdict: no");
  assert.equal(JSON.parse(first.stdout).hooks[0].runtime, "wasm");

  await Deno.writeTextFile(
    `${hook}/scripts/run.js`,
    GUARD.replace("verdict: no", "verdict: edited"),
  );
  const second = await runCli(["dispatch"], { cwd: work, env, stdin: event });
  assert.equal(second.code, 2);
  assert.equal(second.stderr.trim(), "verdict: edited");
  const cached = [...Deno.readDirSync(`${tree.root}/cache`)].filter((e) =>
    e.name.endsWith(".wasm")
  );
  assert.equal(cached.length, 2, "one cached plugin per distinct source");

  const third = await runCli(["dispatch"], { cwd: work, env, stdin: event });
  assert.equal(third.stderr.trim(), "verdict: edited");
  const after = [...Deno.readDirSync(`${tree.root}/cache`)].filter((e) => e.name.endsWith(".wasm"));
  assert.equal(after.length, 2, "an unchanged script is not recompiled");
});
