/**
 * SPEC §4.7 through the real command: a payload hookbox cannot evaluate is the
 * agent's block wherever a closed guard could apply, never its non-blocking
 * error (exit 1). The model writes the tool arguments; each hostile payload
 * here is one it could make: padding past the stdin cap, nesting past the
 * depth cap in an argument the guard never reads, text that is not JSON.
 * Failures are never silent: each failed hook is a line on stderr and in
 * Claude's `systemMessage`; `--strict` makes any failure a block.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { hookMd, ROOT, withoutDenoNotices } from "../_helpers.ts";
import { corpus } from "../runtime-wasm/_corpus.ts";
import { manyTypes } from "../rewriter/_modules.ts";
import { bigPlugin } from "../runtime-wasm/_kept_plugins_probe.ts";
import { lastAnswerIn } from "../../packages/cli/_stop.ts";
import { failureLines } from "../../packages/cli/_fail_closed.ts";
import { readHead } from "../../packages/agents/unreadable.ts";
import { writeToolGuard } from "./_agent_hooks.ts";
import { allowResult } from "../../packages/core/dispatch/result.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { enableCallContexts } from "../../packages/host-deno/call_context.ts";
import { useExecutorMaker } from "../../packages/cli/_executor.ts";
import { agentAnswerOf } from "../../packages/cli/_agent_dispatch.ts";
import { asCall } from "../../packages/cli/_io.ts";
import { dispatchCommand } from "../../packages/cli/dispatch.ts";
import { createExecutor } from "../../packages/deno/executor.ts";

const dir = await Deno.makeTempDir({ prefix: "hookbox-fail-closed-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

/** A hooks folder holding the `rm -rf` guard, closed or open, and optionally a trapping hook. */
async function hooks(name: string, onError: "open" | "closed", extra = false): Promise<string> {
  const root = `${dir}/${name}`;
  const write = async (hook: string, frontmatter: Record<string, unknown>, plugin: string) => {
    await Deno.mkdir(`${root}/${hook}`, { recursive: true });
    await Deno.writeTextFile(`${root}/${hook}/HOOK.md`, hookMd({ name: hook, ...frontmatter }));
    await Deno.writeFile(`${root}/${hook}/plugin.wasm`, await corpus(plugin));
  };
  await write(
    "guard",
    { trigger: "pre-tool-call", on_error: onError, priority: 500 },
    "guard_wasi",
  );
  if (extra) await write("crashy", { trigger: "pre-tool-call", priority: 100 }, "trap_unreachable");
  return root;
}
/** Adds `count` pre-tool-call hooks named `${prefix}${i}` to `root`: `plugin(i)`, `frontmatter(i)`. */
async function addHooks(
  root: string,
  prefix: string,
  count: number,
  plugin: (i: number) => Uint8Array,
  frontmatter: (i: number) => Record<string, unknown>,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    const name = `${prefix}${i}`;
    await Deno.mkdir(`${root}/${name}`, { recursive: true });
    await Deno.writeTextFile(
      `${root}/${name}/HOOK.md`,
      hookMd({ name, trigger: "pre-tool-call", ...frontmatter(i) }),
    );
    await Deno.writeFile(`${root}/${name}/plugin.wasm`, plugin(i));
  }
}
const closed = await hooks("closed", "closed");
const open = await hooks("open", "open");
const crashy = await hooks("crashy", "open", true);

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

/** `hookbox dispatch --agent AGENT --hooks-dir DIR ...` with `input` on stdin (bytes or text). */
async function dispatch(
  args: string[],
  input: string | Uint8Array[],
  env: Record<string, string> = {},
): Promise<Out> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}/packages/cli/main.ts`, "dispatch", ...args],
    cwd: dir,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { XDG_CONFIG_HOME: `${dir}/no-config`, HOOKBOX_CACHE_DIR: `${dir}/cache`, ...env },
  }).spawn();
  const writer = child.stdin.getWriter();
  const chunks = typeof input === "string" ? [new TextEncoder().encode(input)] : input;
  // The command may stop reading (and close the pipe) at its cap.
  for (const chunk of chunks) await writer.write(chunk).catch(() => {});
  await writer.close().catch(() => {});
  const out = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return {
    code: out.code,
    stdout: text(out.stdout).trim(),
    stderr: withoutDenoNotices(text(out.stderr)).trim(),
  };
}

const claude = (toolInput: Record<string, unknown>, cwd = dir) =>
  JSON.stringify({
    session_id: "s1",
    cwd,
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: toolInput,
  });
const denied = (out: Out): string => {
  assertEquals(out.code, 0, out.stderr);
  const answer = JSON.parse(out.stdout).hookSpecificOutput;
  assertEquals(answer.permissionDecision, "deny");
  return answer.permissionDecisionReason;
};
const claudeArgs = (hooksDir: string, ...more: string[]) => [
  "--agent",
  "claude-code",
  "--event",
  "PreToolUse",
  "--hooks-dir",
  hooksDir,
  ...more,
];

/** `tool_input` with `{"command": …}` and a description nested `depth` levels deep. */
function deepInput(command: string, depth: number): Record<string, unknown> {
  let padding: unknown = "x";
  for (let i = 0; i < depth; i++) padding = [padding];
  return { command, description: padding };
}

/** A Claude payload padded past the 16 MiB stdin cap, in 1 MiB chunks. */
function oversized(command: string): Uint8Array[] {
  const head = new TextEncoder().encode(claude({ command, pad: "" }).slice(0, -3));
  const pad = new Uint8Array(1 << 20).fill(0x61);
  return [head, ...Array.from({ length: 17 }, () => pad), new TextEncoder().encode('"}}')];
}

Deno.test("a payload over the stdin cap is Claude's deny where a closed guard applies", async () => {
  const reason = denied(await dispatch(claudeArgs(closed), oversized("ls")));
  match(reason, /LIMIT_INPUT/);
  match(reason, /hook "guard" guards it and fails closed/);
});

Deno.test("the event name of an oversized payload is read from its head without --event", async () => {
  const out = await dispatch(["--agent", "claude-code", "--hooks-dir", closed], oversized("ls"));
  match(denied(out), /cannot evaluate this PreToolUse: LIMIT_INPUT/);
});

Deno.test("a payload over the cap with only open guards fails open, with one line", async () => {
  const out = await dispatch(claudeArgs(open), oversized("ls"));
  assertEquals([out.code, out.stdout], [1, ""]);
  match(out.stderr, /^hookbox: LIMIT_INPUT/);
  assertEquals(out.stderr.split("\n").length, 1);
});

Deno.test("a too-deep argument the guard never reads: the guard still runs and blocks rm -rf", async () => {
  for (const hooksDir of [open, closed]) {
    const reason = denied(await dispatch(claudeArgs(hooksDir), claude(deepInput("rm -rf /", 200))));
    assertEquals(reason, "rm -rf is not allowed");
  }
});

Deno.test("a too-deep safe call is blocked by a closed guard and let through by an open one, loudly", async () => {
  const reason = denied(await dispatch(claudeArgs(closed), claude(deepInput("ls", 200))));
  match(reason, /nests deeper than 64 levels at tool_input\.description/);
  const out = await dispatch(claudeArgs(open), claude(deepInput("ls", 200)));
  assertEquals(out.code, 0);
  match(out.stderr, /the hooks saw it cut there/);
  match(JSON.parse(out.stdout).systemMessage, /nests deeper than 64 levels/);
});

Deno.test("text that is not JSON is a block where a closed guard applies", async () => {
  match(
    denied(await dispatch(claudeArgs(closed), '{"tool_input": {"command": "rm -rf /"')),
    /EVENT_JSON_INVALID/,
  );
  const out = await dispatch(claudeArgs(open), "not json");
  assertEquals(out.code, 1);
});

Deno.test("a cwd no folder can have is answered at once: a closed guard blocks, an open one says why", async () => {
  // 64 KB of `/a`: past Linux's PATH_MAX. The project's hook folder under it was looked for, and
  // each missing folder above it remembered in the scan cache: 20 s and 2.7 GB, then a crash
  // (`INTERNAL: Invalid string length`, exit 1: Claude's non-blocking error).
  const cwd = "/a".repeat(32_000);
  match(denied(await dispatch(claudeArgs(closed), claude({ command: "ls" }, cwd))), /work_dir/);
  const out = await dispatch(claudeArgs(open), claude({ command: "ls" }, cwd));
  assertEquals([out.code, out.stdout], [1, ""]);
  match(out.stderr, /^hookbox: EVENT_INVALID: event field "work_dir" must be at most 4096/);
});

Deno.test("an unreadable payload that names its tool twice cannot narrow the closed guards to the other", async () => {
  // The guard closes on Bash only. The payload does not validate (no session id), so its head
  // is read from the text: JSON.parse (and the agent) take the last `tool_name`, Bash.
  const root = `${dir}/bash-only`;
  await writeToolGuard(root, "^Bash$");
  const payload = (tools: string) =>
    `{"cwd":${JSON.stringify(dir)},"hook_event_name":"PreToolUse",${tools},` +
    `"tool_input":{"command":"ls"}}`;
  for (
    const tools of ['"tool_name":"Read","tool_name":"Bash"', '"tool_name":5,"tool_name":"Bash"']
  ) {
    match(denied(await dispatch(claudeArgs(root), payload(tools))), /EVENT_INVALID/, tools);
  }
  // Named once, as another tool: no closed guard applies, the call fails with one line.
  const other = await dispatch(claudeArgs(root), payload('"tool_name":"Read"'));
  assertEquals([other.code, other.stdout], [1, ""]);
  match(other.stderr, /^hookbox: EVENT_INVALID/);
});

Deno.test("readHead() names a field only when the payload gives it one string value", () => {
  const head = (text: string) => readHead(text);
  assertEquals(head('{"tool_name":"Read","tool_name":"Bash"}'), {});
  assertEquals(head('{"tool_name":"Bash","tool_name":"Bash"}'), { tool: "Bash" });
  assertEquals(head('{"tool_name":"Read","tool_name":{"a":1}}'), {});
  assertEquals(head('{"tool_name":"Read","toolName":"Bash"}'), {});
  assertEquals(head('{"tool_name" :  "Read", "constructor": "x", "pad": [[['), { tool: "Read" });
  assertEquals(
    head('{"hook_event_name":"PreToolUse","tool_input":{"tool_name":"X"},"cwd":"/a","cwd":"/b"}'),
    { event: "PreToolUse" },
  );
});

Deno.test("the same through plain dispatch: exit 2 with the result printed", async () => {
  const out = await dispatch(["--event", "pre-tool-call", "--hooks-dir", closed], "[1, 2");
  assertEquals(out.code, 2);
  assertEquals(JSON.parse(out.stdout).decision, "block");
  match(out.stderr, /EVENT_JSON_INVALID/);
});

Deno.test("a failed hook is one line on stderr and in Claude's systemMessage; --strict blocks", async () => {
  const out = await dispatch(claudeArgs(crashy), claude({ command: "ls" }));
  assertEquals(out.code, 0);
  match(out.stderr, /^hookbox: hook "crashy" \(platform\) error: /);
  match(JSON.parse(out.stdout).systemMessage, /hook "crashy"/);
  const strict = await dispatch(claudeArgs(crashy, "--strict"), claude({ command: "ls" }));
  match(denied(strict), /hook "crashy" failed .* and hookbox runs --strict/);
});

Deno.test("a hook folder that cannot load but says on_error: closed blocks what it might guard", async () => {
  const root = `${dir}/broken`;
  await Deno.mkdir(`${root}/broken-guard`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/broken-guard/HOOK.md`,
    "---\nname: broken-guard\non_error: closed\ntrigger: [unclosed\n---\n",
  );
  const out = await dispatch(claudeArgs(root), "{");
  match(denied(out), /hook "broken-guard" guards it/);
  const fine = await dispatch(claudeArgs(root), claude({ command: "ls" }));
  assertEquals(fine.code, 0);
  ok(fine.stderr.includes("skipped"), fine.stderr);
});

/** A hooks folder with a stop gate (a shell hook) that blocks while `stop_count` < 2 or the answer is empty. */
async function stopGate(): Promise<string> {
  const root = `${dir}/stop-gate/gate`;
  await Deno.mkdir(`${root}/scripts`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/HOOK.md`,
    hookMd({ name: "gate", trigger: "pre-agent-turn-stop" }),
  );
  await Deno.writeTextFile(
    `${root}/scripts/run.sh`,
    [
      "#!/usr/bin/env bash",
      "input=$(cat)",
      'case "$input" in *\'"last_message":""\'*) echo "say what you did" >&2; exit 2;; esac',
      'case "$input" in *\'"stop_count":0\'*|*\'"stop_count":1\'*) echo "check again" >&2; exit 2;; esac',
      "exit 0",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return `${dir}/stop-gate`;
}

Deno.test("the stop gate's budget runs out across processes: attempt 3 lets an honest stop through", async () => {
  const gate = await stopGate();
  const stop = (active: boolean) =>
    JSON.stringify({
      session_id: `budget-${crypto.randomUUID()}`,
      cwd: dir,
      hook_event_name: "Stop",
      stop_hook_active: active,
      last_assistant_message: "Done: all tests pass.",
    });
  const session = JSON.parse(stop(false)).session_id;
  const again = (active: boolean) =>
    JSON.stringify({ ...JSON.parse(stop(active)), session_id: session });
  const args = ["--agent", "claude-code", "--hooks-dir", gate, "--allow-subprocess"];
  const answers = [];
  for (const active of [false, true, true]) {
    const out = await dispatch(args, again(active));
    answers.push(out.stdout === "" ? "stop" : JSON.parse(out.stdout).decision);
  }
  assertEquals(answers, ["block", "block", "stop"]);
  // A new stop (not a retry) starts the count again.
  assertEquals(JSON.parse((await dispatch(args, again(false))).stdout).decision, "block");
});

Deno.test("Copilot's stop message is read from its transcript", async () => {
  const gate = await stopGate();
  const transcript = `${dir}/copilot-transcript.jsonl`;
  await Deno.writeTextFile(
    transcript,
    [
      { type: "user.message", data: { content: "fix the test" } },
      { type: "assistant.message", data: { content: "Fixed: the test passes now." } },
      "",
    ].map((r) => r === "" ? "" : JSON.stringify(r)).join("\n"),
  );
  const payload = (path: string) =>
    JSON.stringify({
      sessionId: `copilot-${crypto.randomUUID()}`,
      cwd: dir,
      transcriptPath: path,
      stopReason: "end_turn",
      stop_hook_active: true,
    });
  const args = ["--agent", "copilot", "--event", "agentStop", "--hooks-dir", gate];
  const read = await dispatch([...args, "--allow-subprocess"], payload(transcript));
  // Read: not "empty"; stop_count 1 for a first retry, so the gate still asks once more.
  match(JSON.parse(read.stdout).reason, /check again/);
  const missing = await dispatch([...args, "--allow-subprocess"], payload(`${dir}/nope.jsonl`));
  match(JSON.parse(missing.stdout).reason, /say what you did/);
});

Deno.test("lastAnswerIn() finds the last answer in JSON lines and in a chat document", () => {
  const gemini = JSON.stringify({
    messages: [
      { type: "user", content: "go" },
      { type: "gemini", content: "first answer" },
      { type: "gemini", content: [{ text: "last answer" }] },
      { type: "info", content: "x" },
    ],
  });
  assertEquals(lastAnswerIn(gemini, true), "last answer");
  const claudeLines = [
    { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "ok" }] } },
    { type: "user", message: { role: "user", content: "thanks" } },
  ].map((r) => JSON.stringify(r)).join("\n");
  assertEquals(lastAnswerIn(`cut line"}\n${claudeLines}`, false), "ok");
  assertEquals(lastAnswerIn("nothing here", false), null);
});

Deno.test("an unreadable tool output is withheld from the model where a closed hook would have read it", async () => {
  const root = `${dir}/closed-post`;
  await Deno.mkdir(`${root}/redactor`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/redactor/HOOK.md`,
    hookMd({ name: "redactor", trigger: "post-tool-call", on_error: "closed" }),
  );
  await Deno.writeFile(`${root}/redactor/plugin.wasm`, await corpus("guard_wasi"));
  const head = new TextEncoder().encode(
    JSON.stringify({
      session_id: "s1",
      cwd: dir,
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "cat big.log" },
      tool_response: "",
    }).slice(0, -2),
  );
  const pad = new Uint8Array(1 << 20).fill(0x61);
  const out = await dispatch(
    ["--agent", "claude-code", "--event", "PostToolUse", "--hooks-dir", root],
    [head, ...Array.from({ length: 17 }, () => pad), new TextEncoder().encode('"}')],
  );
  assertEquals(out.code, 0, out.stderr);
  // Its shape unknown, Claude Code would drop a replacement and pass the output on: the turn
  // ends instead (measured with Claude Code 2.1.197: the model is not asked again).
  const answer = JSON.parse(out.stdout);
  assertEquals(answer.continue, false);
  match(answer.stopReason, /the tool's output was withheld: .*LIMIT_INPUT/);
});

Deno.test("skipped hook folders are one line each in the agent's message, twenty at most and a count", () => {
  const problems = Array.from({ length: 25 }, (_, i) => ({
    code: "HOOK_MANIFEST_INVALID" as const,
    path: `/repo/.agents/hooks/h${i}/HOOK.md`,
    // A YAML error's code frame: two more lines, which `hookbox validate` prints.
    message: `frontmatter is not valid YAML at line 5, column 3\n5 | x: [\n  |   ^`,
  }));
  const lines = failureLines(allowResult("pre-tool-call"), problems);
  assertEquals(lines.length, 21);
  ok(lines.every((line) => !line.includes("\n")), "one line each");
  match(
    lines[0]!,
    /^hookbox: warning: HOOK_MANIFEST_INVALID \/repo\/\.agents\/hooks\/h0\/HOOK\.md: frontmatter is not valid YAML at line 5, column 3 \(skipped\)$/,
  );
  assertEquals(
    lines[20],
    "hookbox: warning: 5 more hook folders skipped (hookbox validate lists them all)",
  );
});

Deno.test("a repository's hooks that never finish building cannot hold the guard's answer past an agent's timeout", async () => {
  // Source of the attack: three JS hooks (a repository's, here given with --hooks-dir), run
  // before the guard, whose top levels never end.
  // Each build ran until its timeout (30 s then), one after another: Copilot ends a hook call
  // after 30 s and Gemini CLI after 60 s, and then let the tool run.
  const root = await hooks("unbuildable", "closed");
  for (let i = 1; i <= 3; i++) {
    await Deno.mkdir(`${root}/loop${i}/scripts`, { recursive: true });
    await Deno.writeTextFile(
      `${root}/loop${i}/HOOK.md`,
      hookMd({ name: `loop${i}`, trigger: "pre-tool-call", priority: 1000 }),
    );
    await Deno.writeTextFile(
      `${root}/loop${i}/scripts/run.mjs`,
      `let n = ${i};\nwhile (true) n++;\nexport default function () { return { reason: String(n) }; }\n`,
    );
  }
  const out = await dispatch(claudeArgs(root), claude({ command: "rm -rf /" }));
  assertEquals(denied(out), "rm -rf is not allowed");
  const message = JSON.parse(out.stdout).systemMessage as string;
  // Each failed to build: the first ran to its own 10 s timeout (or, on a loaded machine, to
  // what bundling left of the process's 12 s); the process's building time then ran out for
  // the rest, which a later call builds. Three builds of 10 s cannot fit in 12 s.
  const loops = message.split("\n").filter((line) => /loop\d/.test(line));
  assertEquals(loops.length, 3);
  const built =
    /hook "loop\d" \(platform\) error: load: COMPILE_FAILED: (the hook did not finish building in 10000 ms|not built: this process('s| has spent its) 12000 ms of building)/;
  ok(loops.every((line) => built.test(line)), message);
  match(message, /COMPILE_FAILED: not built: this process('s| has spent its) 12000 ms of building/);
});

/**
 * The closed guard's hook folder (`hooks(root, "closed")`) with an AssemblyScript hook named
 * `name` run before the guard, whose `scripts/run.as.ts` is `source`; the folder's path.
 */
async function asHookBeforeGuard(root: string, name: string, source: string): Promise<string> {
  const dir = await hooks(root, "closed");
  await Deno.mkdir(`${dir}/${name}/scripts`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/${name}/HOOK.md`,
    hookMd({ name, trigger: "pre-tool-call", priority: 1000 }),
  );
  await Deno.writeTextFile(`${dir}/${name}/scripts/run.as.ts`, source);
  return dir;
}

Deno.test("a repository's AssemblyScript hook that keeps its compiler busy cannot hold the guard's answer", async () => {
  // 1.4 KB of twenty nested `@inline` functions kept the compiler busy for minutes on the
  // thread that answers the agent (1.5 GB), past every agent's hook timeout; it cannot be
  // stopped part-way there. It now compiles in a process of its own, stopped with the call's
  // building time, and the guard answers.
  const chain = Array.from(
    { length: 20 },
    (_, i) =>
      `@inline function g${i}(x: i32): i32 { return ${
        i === 0 ? "x + 1" : `g${i - 1}(x) + g${i - 1}(x + 1)`
      }; }`,
  );
  const root = await asHookBeforeGuard(
    "as-compile",
    "inline",
    `${chain.join("\n")}\nexport function hook(): i32 { return g19(1) * 0; }\n`,
  );
  const out = await dispatch(claudeArgs(root), claude({ command: "rm -rf /" }));
  assertEquals(denied(out), "rm -rf is not allowed");
  match(
    JSON.parse(out.stdout).systemMessage as string,
    /hook "inline" \(platform\) error: load: COMPILE_FAILED: not built: (the AssemblyScript compiler did not finish within the \d+ ms of building time left|this process has spent its 12000 ms of building time)/,
  );
});

Deno.test("a repository's links the file system cannot resolve cannot switch the guards off", async () => {
  // A link to itself (ELOOP) or to a name too long (ENAMETOOLONG) ended discovery with
  // "INTERNAL" before any hook ran: with only open guards, the agent's non-blocking error,
  // and `rm -rf /` ran although the guard would have blocked it. The guard runs now.
  const cases: Record<string, (project: string) => Promise<void>> = {
    "the project's hook folder links to itself": (p) => Deno.symlink("hooks", `${p}/.agents/hooks`),
    ".agents links to itself": async (p) => {
      await Deno.remove(`${p}/.agents`);
      await Deno.symlink(".agents", `${p}/.agents`);
    },
    "a hook folder links to itself": async (p) => {
      await Deno.mkdir(`${p}/.agents/hooks`);
      await Deno.symlink("loop", `${p}/.agents/hooks/loop`);
    },
    "a hook folder links to a name too long": async (p) => {
      await Deno.mkdir(`${p}/.agents/hooks`);
      await Deno.symlink("n".repeat(300), `${p}/.agents/hooks/long`);
    },
    "the folder's HOOK.md links to itself": async (p) => {
      await Deno.mkdir(`${p}/.agents/hooks`);
      await Deno.symlink("HOOK.md", `${p}/.agents/hooks/HOOK.md`);
    },
  };
  for (const [name, make] of Object.entries(cases)) {
    const project = await Deno.makeTempDir({ dir, prefix: "links-" });
    await Deno.mkdir(`${project}/.agents`);
    await make(project);
    const out = await dispatch(claudeArgs(open), claude({ command: "rm -rf /" }, project));
    assertEquals(denied(out), "rm -rf is not allowed", `${name}: ${out.stderr}`);
    match(out.stderr, /HOOK_DIR_UNREADABLE .*could not be read: /, name);
  }
});

Deno.test("a repository's plugins with many function types cannot crash the hook call", async () => {
  // Source of the attack: V8 keeps every distinct function type it sees and ends the process
  // past about 1.9 million. 20 hooks of 100,000 types each ran before the guard: the call
  // died ("too many canonicalized types"), which an agent reads as a non-blocking error.
  const root = await hooks("many-types", "closed");
  await addHooks(root, "types", 20, (i) => manyTypes(i, 100_000), () => ({ priority: 1000 }));
  const out = await dispatch(claudeArgs(root), claude({ command: "rm -rf /" }));
  assertEquals(denied(out), "rm -rf is not allowed");
  // Each is refused before the engine sees it (the process's budget: type_budget_test.ts).
  const refused = (JSON.parse(out.stdout).systemMessage as string).split("\n")
    .filter((line) =>
      /limit: module: module has 100001 types, at most 4096 are allowed$/.test(line)
    );
  assertEquals(refused.length, 20, JSON.parse(out.stdout).systemMessage.slice(0, 600));
});

Deno.test("a repository's big plugins cannot make one hook call hold gigabytes: past the cap the guard blocks", async () => {
  // Source of the attack: plugins let go are not collected before a one-shot process ends, and
  // a repository may ship a thousand 4 MiB plugins: 150 of them held ~1 GB in one call. The
  // cap is $HOOKBOX_LOADED_PLUGIN_MB (256 by default), 1 MiB here: three ~0.5 MB plugins reach it.
  const root = await hooks("big-plugins", "closed");
  await addHooks(root, "big", 3, (i) => bigPlugin(1800, i), (i) => ({ priority: 1000 - i }));
  const env = { HOOKBOX_LOADED_PLUGIN_MB: "1" };
  const out = await dispatch(claudeArgs(root), claude({ command: "ls" }), env);
  assertEquals(
    denied(out),
    'hook "guard" failed (limit: module: this process has loaded 1 MiB of plugins, its cap is 1 MiB (loadedPluginBytes): no more are loaded in it) and is on_error: closed',
  );
  // Under a cap they fit in, the guard runs and lets `ls` through.
  const fits = await dispatch(claudeArgs(root), claude({ command: "ls" }), {
    HOOKBOX_LOADED_PLUGIN_MB: "4",
  });
  assertEquals([fits.code, fits.stdout], [0, ""], fits.stderr);
  // A value that is not a number of MiB is one line, and the default applies.
  const bad = await dispatch(claudeArgs(root), claude({ command: "ls" }), {
    HOOKBOX_LOADED_PLUGIN_MB: "lots",
  });
  assertEquals(bad.code, 0, bad.stderr);
  match(
    bad.stderr,
    /\$HOOKBOX_LOADED_PLUGIN_MB is "lots", not a whole number of MiB from 1 to 65536: using 256/,
  );
});

Deno.test("an AssemblyScript hook too big to compile within a hook call is refused at once, the guard still answers", async () => {
  // Source of the attack: a 564 KB AssemblyScript source took the compiler 14 s on the
  // call's own thread, where it cannot be stopped part-way.
  const fns = Array.from(
    { length: 3000 },
    (_, i) => `function f${i}(x: i32): i32 { return x + ${i}; }`,
  );
  const root = await asHookBeforeGuard(
    "big-as",
    "big",
    `${fns.join("\n")}\nexport function hook(): i32 { return f1(0); }\n`,
  );
  const out = await dispatch(claudeArgs(root), claude({ command: "rm -rf /" }));
  assertEquals(denied(out), "rm -rf is not allowed");
  match(
    JSON.parse(out.stdout).systemMessage,
    /hook "big" \(platform\) error: load: COMPILE_FAILED: the source is \d+ characters: an agent's hook call compiles at most 65536 \(about 2 s\) itself; (it is being built in the background|a later call builds it)/,
  );
});

Deno.test("a repository's hooks at their own limits cannot hold the call past an agent's timeout", async () => {
  // Source of the attack: 20 hooks run before the guard, each looping through 10 billion
  // instructions (its own most, about 2 s): 40 s together, past Copilot's 30 s.
  const root = await hooks("spinning", "closed");
  const loop = await corpus("loop_forever");
  await addHooks(root, "spin", 20, () => loop, (i) => ({
    priority: i < 4 ? 1000 : 980,
    timeout: 600_000,
    limits: { fuel: 10_000_000_000 },
  }));
  // After four of them (5 s or more), a JS hook whose top level never ends: its build would
  // run its own 10 s, past the event's 15 s (the call then took about 25 s).
  await Deno.mkdir(`${root}/builder/scripts`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/builder/HOOK.md`,
    hookMd({ name: "builder", trigger: "pre-tool-call", priority: 990 }),
  );
  await Deno.writeTextFile(
    `${root}/builder/scripts/run.mjs`,
    "let n = 0;\nwhile (true) n++;\nexport default function () { return {}; }\n",
  );
  const out = await dispatch(claudeArgs(root), claude({ command: "ls" }));
  // The event's 15 s are spent before the guard's turn: as a closed guard, it blocks.
  assertEquals(
    denied(out),
    'hook "guard" failed (timeout: time: the event\'s time budget is spent) and is on_error: closed',
  );
  // The build is inside the event's time: still under way at the deadline, the hook ends there.
  match(
    JSON.parse(out.stdout).systemMessage,
    /hook "builder" \(platform\) timeout: time: the event's time budget (ran out while the hook was being built|is spent)/,
  );
});

Deno.test("a fault of hookbox's own while the hooks run is a block where a closed guard applies", async () => {
  // In process, with an executor whose dispatch fails as no hook would (a bug, the process out of
  // descriptors): the call must not end as the agent's non-blocking error.
  enableCallContexts(AsyncLocalStorage);
  useExecutorMaker((options) => {
    const real = createExecutor(options);
    return { ...real, dispatch: () => Promise.reject(new TypeError("something broke\ninside")) };
  });
  try {
    const answerTo = (hooksDir: string, command: string) =>
      asCall(
        { stdin: claude({ command }), cwd: dir },
        () => agentAnswerOf("claude-code", { "hooks-dir": [hooksDir] }, { scanCache: false }),
      );
    const blocked = await answerTo(closed, "ls");
    assertEquals(blocked.exitCode, 0, blocked.stderr);
    const answer = JSON.parse(blocked.stdout).hookSpecificOutput;
    assertEquals(answer.permissionDecision, "deny");
    match(answer.permissionDecisionReason, /INTERNAL: something broke inside; hook "guard"/);
    // Only open guards: the failed call it is, with one line saying why.
    const failed = await answerTo(open, "ls");
    assertEquals([failed.exitCode, failed.stdout], [1, ""]);
    match(failed.stderr, /^hookbox: INTERNAL: something broke inside$/);
    // Plain dispatch: exit 2, the block printed.
    const event = JSON.stringify({
      event_type: "pre-tool-call",
      tool_name: "Bash",
      tool_input: {},
    });
    const printed: string[] = [];
    const print = console.log;
    console.log = (line: string) => printed.push(line);
    let code: number;
    try {
      code = await asCall(
        { stdin: event, cwd: dir },
        () => dispatchCommand(["--hooks-dir", closed], { scanCache: false }),
      );
    } finally {
      console.log = print;
    }
    assertEquals(code, 2);
    assertEquals(JSON.parse(printed.join("\n")).decision, "block");
  } finally {
    useExecutorMaker(null);
  }
});
