/**
 * End to end: every hostile corpus plugin dropped in as `<hook>/plugin.wasm`
 * and dispatched through the library (`createExecutor`) and the CLI
 * (`hookbox dispatch`). Each ends with its outcome and detail (SPEC §4), fails
 * open by default and closed with `on_error: closed`, and leaves the executor
 * (and a second tenant) serving the next event normally.
 */
import type { FailureCode } from "../../packages/core/runtime/failure.ts";
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { createExecutor, type DispatchResult, type Executor } from "../../packages/hookbox/deno.ts";
import { DEFAULT_POLICY } from "../../packages/core/policy.ts";
import type { Outcome } from "../../packages/hookbox/deno.ts";
import { tempTree } from "../_helpers.ts";
import { runCli } from "../_cli.ts";
import {
  hugeModule,
  pluginBytes,
  type RecordSummary,
  summary,
  toolCall,
  writePluginHook,
} from "./_plugins.ts";

/** What a hostile plugin must end with. */
interface Case {
  /** Corpus name, `garbage`, or `huge` (a module over the module cap). */
  plugin: string;
  /** Frontmatter over {@linkcode HOSTILE}. */
  frontmatter?: Record<string, unknown>;
  outcome: Outcome;
  detail: string | RegExp | null;
  /** The stable failure code; null (the default) for ok and block. */
  code?: FailureCode;
  exitCode?: number | null;
}

/** A limit's detail names the limit and the setting that raises it. */
const FUEL_DETAIL =
  /^fuel: \d+ instructions \(limits\.fuel in HOOK\.md, at most the policy's max_fuel\)$/;
const TIME_DETAIL = /^time: 300 ms \(timeout in HOOK\.md, at most the policy's max_timeout_ms\)$/;
const MEMORY_DETAIL =
  /^memory: \d+ MiB \(limits\.memory_mb in HOOK\.md, at most the policy's max_memory_mb\)$/;
const OUTPUT_DETAIL =
  /^output: \d+ KiB \(limits\.output_kb in HOOK\.md, at most the policy's max_output_kb\)$/;

const TIME = { timeout: 300, limits: { fuel: 1e12, memory_mb: 2, output_kb: 64 } };

const CASES: Case[] = [
  {
    plugin: "loop_forever",
    outcome: "limit",
    detail: FUEL_DETAIL,
    code: "LIMIT_FUEL",
  },
  {
    plugin: "loop_forever_extism",
    outcome: "limit",
    detail: FUEL_DETAIL,
    code: "LIMIT_FUEL",
  },
  {
    plugin: "catch_all_escape",
    outcome: "limit",
    detail: FUEL_DETAIL,
    code: "LIMIT_FUEL",
  },
  {
    plugin: "loop_in_host_call",
    frontmatter: TIME,
    outcome: "timeout",
    detail: TIME_DETAIL,
    code: "TIMEOUT",
  },
  {
    plugin: "sleep_loop",
    frontmatter: TIME,
    outcome: "timeout",
    detail: TIME_DETAIL,
    code: "TIMEOUT",
  },
  {
    plugin: "log_flood_extism",
    frontmatter: TIME,
    outcome: "timeout",
    detail: TIME_DETAIL,
    code: "TIMEOUT",
  },
  {
    plugin: "memory_bomb",
    outcome: "limit",
    detail: MEMORY_DETAIL,
    code: "LIMIT_MEMORY",
  },
  {
    plugin: "memory_bomb_exit",
    outcome: "limit",
    detail: MEMORY_DETAIL,
    code: "LIMIT_MEMORY",
    exitCode: 1,
  },
  {
    plugin: "memory_bomb_extism",
    outcome: "limit",
    detail: MEMORY_DETAIL,
    code: "LIMIT_MEMORY",
    exitCode: 1,
  },
  {
    plugin: "alloc_bomb_extism",
    outcome: "limit",
    detail: MEMORY_DETAIL,
    code: "LIMIT_MEMORY",
  },
  { plugin: "stack_bomb", outcome: "limit", detail: "stack", code: "LIMIT_STACK" },
  { plugin: "stack_bomb_extism", outcome: "limit", detail: "stack", code: "LIMIT_STACK" },
  {
    plugin: "output_flood",
    outcome: "limit",
    detail: OUTPUT_DETAIL,
    code: "LIMIT_OUTPUT",
  },
  {
    plugin: "output_flood_extism",
    outcome: "limit",
    detail: OUTPUT_DETAIL,
    code: "LIMIT_OUTPUT",
  },
  {
    plugin: "bad_import",
    outcome: "error",
    detail: "import denied: wasi_snapshot_preview1.sock_accept",
    code: "PLUGIN_IMPORT_DENIED",
  },
  {
    plugin: "bad_import_env",
    outcome: "error",
    detail: "import denied: env.system",
    code: "PLUGIN_IMPORT_DENIED",
  },
  {
    plugin: "bad_import_extism",
    outcome: "error",
    detail: "import denied: extism:host/user.exec",
    code: "PLUGIN_IMPORT_DENIED",
  },
  { plugin: "trap_unreachable", outcome: "error", detail: "trap: unreachable", code: "TRAP" },
  {
    plugin: "trap_unreachable_extism",
    outcome: "error",
    detail: "trap: unreachable",
    code: "TRAP",
  },
  { plugin: "garbage", outcome: "error", detail: /^invalid module: /, code: "PLUGIN_INVALID" },
  {
    plugin: "huge",
    outcome: "limit",
    detail: /^module: \d+ KiB of module \(the policy's module_kb\)$/,
    code: "LIMIT_MODULE",
  },
  { plugin: "block_wasi", outcome: "block", detail: null, exitCode: 2 },
  { plugin: "block_extism", outcome: "block", detail: null, exitCode: 2 },
  { plugin: "rewrite_wasi", outcome: "ok", detail: null, exitCode: 0 },
  { plugin: "rewrite_extism", outcome: "ok", detail: null, exitCode: 0 },
];

/** The hostile hook runs first, only for `Bash`; guards run for every tool. */
const HOSTILE = {
  priority: 500,
  matcher: { tool: "^Bash$" },
  timeout: 10_000,
  limits: { fuel: 5_000_000, memory_mb: 2, output_kb: 64 },
};
/** Module cap the library executor runs with (the CLI keeps the default policy). */
const LIBRARY_MODULE_KB = 64;
const CLI_MODULE_KB = DEFAULT_POLICY.moduleKb;
const REASON = "rm -rf is not allowed";

type Level = "platform" | "project";

/** Writes the hostile hook (on_error `onError`) and the two benign guards into `dir`. */
async function writeFolder(
  dir: string,
  c: Case,
  bytes: Uint8Array,
  options: { onError: "open" | "closed"; isolation: "fresh" | "warm" },
): Promise<void> {
  const fm = { ...HOSTILE, ...c.frontmatter, on_error: options.onError };
  await writePluginHook(dir, "hostile", bytes, { ...fm, isolation: options.isolation });
  await writePluginHook(dir, "guard-wasi", await pluginBytes("guard_wasi"), {
    priority: 100,
    isolation: "warm",
  });
  await writePluginHook(dir, "guard-extism", await pluginBytes("guard_extism"), { priority: 90 });
}

function guard(name: string, level: Level, blocks = false): RecordSummary {
  return {
    name,
    level,
    runtime: "wasm",
    outcome: blocks ? "block" : "ok",
    exit_code: blocks ? 2 : 0,
    stdout: "",
    stderr: blocks ? REASON : "",
    code: null,
    detail: null,
  };
}

/** The command of the first event: the rewrite plugins turn `rm -rf /` into `ls -la`. */
function firstCommand(c: Case): string {
  return c.plugin.startsWith("rewrite") ? "rm -rf /" : "ls";
}

/** Checks the hostile hook's record. */
function assertHostile(result: DispatchResult, c: Case, level: Level): void {
  const record = result.hooks[0];
  ok(record, "the hostile hook has a record");
  assertEquals(
    { name: record.name, level: record.level, runtime: record.runtime, outcome: record.outcome },
    { name: "hostile", level, runtime: "wasm", outcome: c.outcome },
  );
  if (c.detail instanceof RegExp) match(record.detail ?? "", c.detail);
  else assertEquals(record.detail, c.detail);
  assertEquals(record.code, c.code ?? null);
  assertEquals(record.exit_code, c.exitCode ?? null);
}

/** Checks the first event's result in a folder whose hostile hook fails open. */
function assertOpen(result: DispatchResult, c: Case, level: Level): void {
  assertHostile(result, c, level);
  const rest = summary(result).hooks.slice(1);
  if (c.outcome === "block") {
    assertEquals([result.decision, result.blocked_by, result.reason], [
      "block",
      "hostile",
      "blocked by policy",
    ]);
    assertEquals(result.hooks[0]?.stderr, "blocked by policy");
    assertEquals(rest, [], "a block stops the chain");
    return;
  }
  assertEquals([result.decision, result.blocked_by, result.reason], ["allow", null, null]);
  assertEquals(rest, [guard("guard-wasi", level), guard("guard-extism", level)]);
  const rewritten = c.plugin.startsWith("rewrite") ? { command: "ls -la" } : null;
  assertEquals(result.modified_input, rewritten);
}

/** Checks the first event's result in a folder whose hostile hook says `on_error: closed`. */
function assertClosed(result: DispatchResult, c: Case, level: Level): void {
  assertHostile(result, c, level);
  if (c.outcome === "ok") return assertOpen(result, c, level);
  assertEquals([result.decision, result.blocked_by], ["block", "hostile"]);
  assertEquals(result.hooks.length, 1, "a block stops the chain");
  if (c.outcome !== "block") {
    ok(result.reason?.includes(`(${c.outcome}: ${result.hooks[0]?.detail})`), result.reason ?? "");
  }
}

/** Events the hostile hook does not match: the guards alone must still decide correctly. */
async function assertGuardsServe(executor: Executor, level: Level, tenantId: string) {
  const blocked = await executor.dispatch(toolCall("rm -rf /", "Shell"), { tenantId });
  assertEquals(
    [blocked.decision, blocked.blocked_by, blocked.reason],
    ["block", "guard-wasi", REASON],
  );
  assertEquals(summary(blocked).hooks, [guard("guard-wasi", level, true)]);
  const allowed = await executor.dispatch(toolCall("ls", "Shell"), { tenantId });
  assertEquals(allowed.decision, "allow");
  assertEquals(summary(allowed).hooks, [guard("guard-wasi", level), guard("guard-extism", level)]);
}

async function bytesFor(c: Case, moduleKb: number): Promise<Uint8Array> {
  return c.plugin === "huge" ? hugeModule(moduleKb) : await pluginBytes(c.plugin);
}

for (const c of CASES) {
  for (const isolation of ["fresh", "warm"] as const) {
    Deno.test(`createExecutor() dispatches ${c.plugin} (${isolation}) to ${c.outcome} ${c.detail ?? ""}`, async () => {
      await using tree = await tempTree();
      const bytes = await bytesFor(c, LIBRARY_MODULE_KB);
      const policy = { moduleKb: LIBRARY_MODULE_KB };
      const open = await tree.dir("open");
      await writeFolder(open, c, bytes, { onError: "open", isolation });
      const executor = createExecutor({ projectDir: open, userDir: null, policy });
      try {
        const event = toolCall(firstCommand(c));
        const first = await executor.dispatch(event);
        assertOpen(first, c, "project");
        await assertGuardsServe(executor, "project", "default");
        const again = await executor.dispatch(event);
        assertOpen(again, c, "project");
        const other = await executor.dispatch(event, { tenantId: "b" });
        assertEquals(summary(other), summary(first), "a second tenant sees the same result");
        await assertGuardsServe(executor, "project", "b");
      } finally {
        await executor.close();
      }
      if (c.outcome === "ok") return;
      const closed = await tree.dir("closed");
      await writeFolder(closed, c, bytes, { onError: "closed", isolation });
      const strict = createExecutor({ projectDir: closed, userDir: null, policy });
      try {
        assertClosed(await strict.dispatch(toolCall("ls")), c, "project");
        await assertGuardsServe(strict, "project", "default");
        assertClosed(await strict.dispatch(toolCall("ls"), { tenantId: "b" }), c, "project");
      } finally {
        await strict.close();
      }
    });
  }

  Deno.test(`hookbox dispatch runs ${c.plugin} to ${c.outcome} ${c.detail ?? ""}`, async () => {
    await using tree = await tempTree();
    const bytes = await bytesFor(c, CLI_MODULE_KB);
    const env = { XDG_CONFIG_HOME: `${tree.root}/config`, HOOKBOX_CACHE_DIR: `${tree.root}/cache` };
    const run = async (onError: "open" | "closed") => {
      const dir = await tree.dir(onError);
      await writeFolder(dir, c, bytes, { onError, isolation: "fresh" });
      const stdin = JSON.stringify(toolCall(onError === "open" ? firstCommand(c) : "ls"));
      return await runCli(["dispatch", "--hooks-dir", dir], { cwd: tree.root, env, stdin });
    };
    const [open, closed] = await Promise.all([run("open"), run("closed")]);
    const blocks = c.outcome === "block";
    assertEquals(open.code, blocks ? 2 : 0, open.stderr);
    assertOpen(JSON.parse(open.stdout), c, "platform");
    if (blocks) assertEquals(open.stderr.trim(), "blocked by policy");
    const strict = JSON.parse(closed.stdout) as DispatchResult;
    assertClosed(strict, c, "platform");
    assertEquals(closed.code, strict.decision === "block" ? 2 : 0, closed.stderr);
    if (strict.decision === "block") assertEquals(closed.stderr.trim(), strict.reason);
  });
}
