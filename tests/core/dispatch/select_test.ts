import assert from "node:assert/strict";
import { abText, fakeHook, toolEvent } from "../../_helpers.ts";
import { names, run } from "./_run.ts";
import {
  type MatcherJob,
  matcherVerdicts,
  selectHooks,
  selectHooksApart,
} from "../../../packages/core/dispatch/select.ts";
import type { HookEvent } from "../../../packages/core/schema/event.ts";
import type { HookDefinition, HookLevel } from "../../../packages/core/hook/types.ts";
import { compiledMatcher } from "../../../packages/core/schema/matcher.ts";

const tool = (tool_name: string, tool_input: Record<string, unknown>) =>
  toolEvent({ tool_name, tool_input });

async function selected(
  hook: ReturnType<typeof fakeHook>,
  event: Record<string, unknown>,
): Promise<boolean> {
  const { result, called } = await run([hook], event);
  assert.deepEqual(names(result), called);
  return called.length === 1;
}

Deno.test("`dispatch()` orders by priority, then platform, user, project, then name", async () => {
  const hooks = [
    fakeHook({ name: "p-low", priority: 5 }, { level: "platform" }),
    fakeHook({ name: "zeta" }, { level: "project" }),
    fakeHook({ name: "alpha" }, { level: "project" }),
    fakeHook({ name: "user-b" }, { level: "user" }),
    fakeHook({ name: "top", priority: 1000 }, { level: "project" }),
    fakeHook({ name: "user-a" }, { level: "user" }),
    fakeHook({ name: "zz-platform" }, { level: "platform" }),
    fakeHook({ name: "mid", priority: 500 }, { level: "user" }),
  ];
  const { result, called } = await run(hooks, toolEvent());
  const expected = ["top", "mid", "zz-platform", "user-a", "user-b", "alpha", "zeta", "p-low"];
  assert.deepEqual(called, expected);
  assert.deepEqual(names(result), expected);
});

Deno.test("`dispatch()` selects hooks by trigger, including trigger lists and aliases", async () => {
  const hooks = [
    fakeHook({ name: "pre", trigger: "pre-tool-call" }),
    fakeHook({ name: "both", trigger: ["pre-tool-call", "post-tool-call"] }),
    fakeHook({ name: "snake", trigger: "post_tool_call" }),
    fakeHook({ name: "session", trigger: "pre-session" }),
  ];
  assert.deepEqual((await run(hooks, toolEvent())).called, ["both", "pre"]);
  const post = toolEvent({ event_type: "post_tool_call", tool_output: "x" });
  assert.deepEqual((await run(hooks, post)).called, ["both", "snake"]);
  const session = { event_type: "pre-session", session_id: "s" };
  assert.deepEqual((await run(hooks, session)).called, ["session"]);
});

Deno.test("`dispatch()` with only matcher.tool matches tool_name", async () => {
  const hook = fakeHook({ name: "h", matcher: { tool: "^(Shell|Bash)$" } });
  assert.equal(await selected(hook, tool("Bash", { command: "ls" })), true);
  assert.equal(await selected(hook, tool("Shell", {})), true);
  assert.equal(await selected(hook, tool("BashOutput", { command: "ls" })), false);
  assert.equal(await selected(hook, tool("Read", { path: "Bash" })), false);
});

Deno.test("`dispatch()` with only matcher.pattern matches the JSON text of tool_input", async () => {
  const hook = fakeHook({ name: "h", matcher: { pattern: "rm\\s+-rf" } });
  assert.equal(await selected(hook, tool("Bash", { command: "rm  -rf /" })), true);
  assert.equal(await selected(hook, tool("Anything", { args: ["rm -rf x"] })), true);
  assert.equal(await selected(hook, tool("Bash", { command: "ls" })), false);
  const json = fakeHook({ name: "j", matcher: { pattern: '^\\{"command":"rm ' } });
  assert.equal(await selected(json, tool("Bash", { command: "rm x" })), true);
  const key = fakeHook({ name: "k", matcher: { pattern: '"path"' } });
  assert.equal(await selected(key, tool("Read", { path: "/etc" })), true);
});

Deno.test("`dispatch()` tests matcher.pattern against tool_input only, not other fields", async () => {
  const hook = fakeHook({ name: "h", matcher: { pattern: "Bash|sess-1" } });
  assert.equal(await selected(hook, tool("Bash", { command: "ls" })), false);
});

Deno.test("`dispatch()` needs both matcher regexes to match when both are present", async () => {
  const hook = fakeHook({ name: "h", matcher: { tool: "^Bash$", pattern: "rm -rf" } });
  assert.equal(await selected(hook, tool("Bash", { command: "rm -rf /" })), true);
  assert.equal(await selected(hook, tool("Read", { command: "rm -rf /" })), false);
  assert.equal(await selected(hook, tool("Bash", { command: "ls" })), false);
});

Deno.test("`dispatch()` never matches matcher.tool against non-tool events", async () => {
  const hook = fakeHook({
    name: "h",
    trigger: ["pre-tool-call", "pre-agent-turn"],
    matcher: { tool: ".*" },
  });
  const turn = { event_type: "pre-agent-turn", session_id: "s", prompt: "hi", tool_name: "Bash" };
  assert.equal(await selected(hook, turn), false);
  assert.equal(await selected(hook, tool("Bash", {})), true);
});

Deno.test("`dispatch()` tests matcher.pattern against the prompt of pre-agent-turn", async () => {
  const hook = fakeHook({ name: "h", trigger: "pre-agent-turn", matcher: { pattern: "password" } });
  const turn = (prompt: string) => ({ event_type: "pre-agent-turn", session_id: "s", prompt });
  assert.equal(await selected(hook, turn("my password is hunter2")), true);
  assert.equal(await selected(hook, turn("hello")), false);
  const sess = fakeHook({ name: "s", trigger: "pre-agent-turn", matcher: { pattern: "sess" } });
  assert.equal(await selected(sess, { ...turn("hello"), session_id: "sess-9" }), false);
});

Deno.test("`dispatch()` tests matcher.pattern against the messages of pre-llm-call", async () => {
  const hook = fakeHook({ name: "h", trigger: "pre-llm-call", matcher: { pattern: "secret" } });
  const llm = (content: string) => ({
    event_type: "pre-llm-call",
    session_id: "s",
    messages: [{ role: "user", content }],
    model: "secret-model",
  });
  assert.equal(await selected(hook, llm("the secret is 42")), true);
  assert.equal(await selected(hook, llm("nothing here")), false);
});

Deno.test("`dispatch()` runs a hook whose matcher the event's budget cannot answer, others still judged", async () => {
  // A repository's pattern that defeats RE2's DFA costs 14 s of host CPU on this 900 KB
  // input; within the event's budget it is cut, and its hook runs and sees the event.
  const hooks = [
    fakeHook({ name: "costly", matcher: { pattern: "\\pL{0,500}a[ab]{25}[^ab]" } }, {
      level: "project",
    }),
    // Listed after it, but a user hook: its matcher is tried first, on the budget's start.
    fakeHook({ name: "user-miss", matcher: { pattern: "(?i)curl.*\\|\\s*sh" } }, { level: "user" }),
    fakeHook({ name: "user-hit", matcher: { pattern: '(?i)"content":"[ab]+"' } }, {
      level: "user",
    }),
  ];
  const event = tool("Write", { file_path: "x", content: abText(900_000) });
  const { called } = await run(hooks, event);
  assert.deepEqual(called, ["user-hit", "costly"]);
});

Deno.test("matchers decided apart (`selectHooksApart`) fit exactly as in place", async () => {
  // Hooks at two levels with patterns cheap, scanning and costly; events short and long.
  const patterns = ["[ab]{3}c", "a[ab]{6}b", "\\pL{0,500}a[ab]{25}[^ab]", '"command":', "zz"];
  const hooks = patterns.flatMap((pattern, i) => [
    fakeHook({ name: `user-${i}`, matcher: { pattern } }, { level: "user" }),
    fakeHook({ name: `tenant-${i}`, matcher: { pattern, tool: "^Bash$" } }, { level: "tenant" }),
  ]);
  for (const length of [10, 3_000, 200_000]) {
    for (const tool_name of ["Bash", "Read"]) {
      const event = tool(tool_name, { command: abText(length) }) as unknown as HookEvent;
      const inPlace = selectHooks(hooks, event).map((h) => h.name);
      for (const inline of [0, 1 << 10, 1 << 16]) {
        const sent: MatcherJob[] = [];
        const apart = await selectHooksApart(hooks, event, "tenant", inline, (job) => {
          sent.push(job);
          // Through a structured clone, as to a worker.
          return Promise.resolve(matcherVerdicts(structuredClone(job)));
        });
        assert.deepEqual(apart.map((h) => h.name), inPlace, `${length} ${tool_name} ${inline}`);
        if (inline === 0 && tool_name === "Bash") assert.equal(sent.length, 1);
      }
    }
  }
});

/**
 * `count` hooks at `level` whose patterns were never compiled in this process
 * (fakeHook compiles what it validates): `\p{Greek}{0,N}x`, each ~1,700
 * instructions and ~3 ms to compile.
 */
function uncompiledHooks(count: number, level: HookLevel): HookDefinition[] {
  const unique = crypto.randomUUID().replaceAll("-", "");
  return Array.from({ length: count }, (_, i) => {
    const hook = fakeHook({ name: `${level}-${i}` }, { level });
    const pattern = `${unique}${i}\\p{Greek}{0,${800 + i % 200}}x`;
    hook.manifest = { ...hook.manifest, matcher: { pattern } };
    return hook;
  });
}

Deno.test("`selectHooksApart` charges compiles to the inline steps: the others compile apart", async () => {
  const hooks = uncompiledHooks(5, "tenant");
  const event = tool("Bash", { command: "ls" }) as unknown as HookEvent;
  const sent: MatcherJob[] = [];
  const select = () =>
    // Each compile is charged more than 2^16 steps.
    selectHooksApart(hooks, event, "tenant", 1 << 16, (job) => {
      sent.push(job);
      return Promise.resolve(job.matchers.map(() => false));
    });
  // The first compile spends the inline steps (its own search is then decided apart too); one
  // more is compiled here each event, until all are.
  for (const apart of [5, 4, 3, 2, 1]) {
    sent.length = 0;
    assert.deepEqual(await select(), []);
    assert.deepEqual(sent.map((job) => job.matchers.length), [apart]);
  }
  sent.length = 0;
  await select();
  assert.equal(sent.length, 0);
  // Where no step is left, nothing new is compiled here: all go apart.
  const fresh = uncompiledHooks(5, "tenant");
  sent.length = 0;
  await selectHooksApart(fresh, event, "tenant", 0, (job) => {
    sent.push(job);
    return Promise.resolve(null);
  });
  assert.deepEqual(sent.map((job) => job.matchers.length), [5]);
  assert.ok(fresh.every((h) => compiledMatcher(h.manifest.matcher!.pattern!) === undefined));
});

Deno.test("compiling matchers is charged to the event's budget: a repository's hundreds cannot hold it", () => {
  // 300 of them held selection about a second.
  const project = uncompiledHooks(300, "project");
  const user = [
    fakeHook({ name: "user-hit", matcher: { pattern: '"command":"ls"' } }, { level: "user" }),
    fakeHook({ name: "user-miss", matcher: { pattern: "curl.*sh" } }, { level: "user" }),
  ];
  const event = tool("Bash", { command: "ls" }) as unknown as HookEvent;
  const selected = selectHooks([...project, ...user], event).map((h) => h.name);
  // The user's matchers are tried first and still decide.
  assert.ok(selected.includes("user-hit") && !selected.includes("user-miss"));
  // A few project patterns were compiled within the budget (none of them matches "ls"); the
  // rest count as fitting, uncompiled: their hooks run under their own limits.
  const compiled = project.filter((h) => compiledMatcher(h.manifest.matcher!.pattern!));
  assert.ok(compiled.length > 0 && compiled.length < 20, `${compiled.length} compiled`);
  const uncompiled = project.filter((h) => !compiled.includes(h)).map((h) => h.name);
  assert.ok(uncompiled.every((name) => selected.includes(name)));
  // Those compiled said no, but the last, whose compile spent the budget before its search.
  const judged = compiled.filter((h) => !selected.includes(h.name));
  assert.equal(judged.length, compiled.length - 1);
});
