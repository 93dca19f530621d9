/**
 * `hookbox test [HOOK_DIR...]`: runs each hook's `tests/*.json` through the
 * real sandbox with the hook's real limits, alone (no other hook runs), and
 * says per case what was expected and what came back. Exit 0 when every case
 * passes, 1 otherwise.
 *
 * A case is `{"event": {...}, "expect": {...}, "description"?: "..."}`; the
 * event's `event_type` defaults to the hook's first trigger and its
 * `session_id` to `"hookbox-test"`. `expect` holds any of `decision`
 * (`allow` | `block`), `reason_contains`, `modified_input`,
 * `modified_output` (compared as JSON) and `outcome` (the hook's own record:
 * `ok`, `block`, `error`, `timeout`, `limit`, `skipped`).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { absolute, denoFs } from "../host-deno/fs.ts";
import { createExecutor } from "../deno/executor.ts";
import type { DispatchResult } from "../core/dispatch/result.ts";
import type { HookDefinition } from "../core/hook/types.ts";
import { isHookboxError } from "../core/errors.ts";
import { nearest } from "../core/schema/near.ts";
import { EXIT } from "./_io.ts";
import { parseOptions } from "./commands.ts";
import { problemLine } from "./validate.ts";

/** Largest test case file read, bytes. */
const MAX_CASE_BYTES = 1024 * 1024;

const caseSchema = z.strictObject({
  description: z.string().optional(),
  event: z.record(z.string(), z.unknown()),
  expect: z.strictObject({
    decision: z.enum(["allow", "block"]).optional(),
    reason_contains: z.string().optional(),
    modified_input: z.unknown().optional(),
    modified_output: z.unknown().optional(),
    outcome: z.enum(["ok", "block", "error", "timeout", "limit", "skipped", "async"]).optional(),
  }),
});

/** A test case as read from its file. */
export type HookTestCase = z.infer<typeof caseSchema>;

/** What one case came to. */
export interface CaseReport {
  hook: string;
  file: string;
  passed: boolean;
  /** What differed, one line each (empty when it passed). */
  failures: string[];
}

/** Runs the command; returns the exit code. */
export async function testCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("test"),
    allowPositionals: true,
    strict: true,
  });
  const dirs = await hookDirs(positionals.length > 0 ? positionals : ["."]);
  // With --json, stdout carries the JSON alone and the lines go to stderr.
  const say = values.json ? console.error : console.log;
  const reports: CaseReport[] = [];
  let broken = dirs.missing.length;
  for (const missing of dirs.missing) {
    say(`FAIL ${missing}: no such folder, or no HOOK.md in it or its subfolders`);
  }
  for (const dir of dirs.hooks) {
    const hookReports = await testHook(dir, values["allow-subprocess"], say, values["cache-dir"]);
    if (hookReports === null) broken++;
    else reports.push(...hookReports);
  }
  const failed = reports.filter((r) => !r.passed).length;
  if (values.json) console.log(JSON.stringify({ cases: reports, broken }, null, 2));
  console.error(
    `hookbox test: ${reports.length - failed} passed, ${failed} failed` +
      (broken > 0 ? `, ${broken} hook folder(s) could not be tested` : ""),
  );
  return failed > 0 || broken > 0 || reports.length === 0 ? EXIT.bad : EXIT.allow;
}

/** The hook folders named (a hook folder, or a folder of them), and those that are neither. */
async function hookDirs(paths: string[]): Promise<{ hooks: string[]; missing: string[] }> {
  const hooks: string[] = [];
  const missing: string[] = [];
  for (const path of paths.map(absolute)) {
    const info = await denoFs.stat(path);
    if (info?.kind !== "dir") {
      missing.push(path);
      continue;
    }
    if ((await denoFs.stat(`${path}/HOOK.md`))?.kind === "file") {
      hooks.push(path);
      continue;
    }
    const children = (await denoFs.readDir(path))
      .filter((e) => e.isDirectory).map((e) => `${path}/${e.name}`).sort();
    const found: string[] = [];
    for (const child of children) {
      if ((await denoFs.stat(`${child}/HOOK.md`))?.kind === "file") found.push(child);
    }
    if (found.length === 0) missing.push(path);
    hooks.push(...found);
  }
  return { hooks, missing };
}

/** The cases of one hook folder, run; null when the hook cannot be loaded. */
async function testHook(
  dir: string,
  allowSubprocess: boolean,
  say: (line: string) => void,
  cacheDir?: string,
): Promise<CaseReport[] | null> {
  const executor = createExecutor({
    platformDirs: [dir],
    userDir: null,
    projectDir: null,
    allowSubprocess,
    ...(cacheDir === undefined ? {} : { cacheDir }),
  });
  try {
    const [hook] = await executor.hooks();
    const problems = await executor.problems();
    if (hook === undefined) {
      for (const p of problems) say(`FAIL ${problemLine(p)}`);
      if (problems.length === 0) say(`FAIL ${dir}: the hook could not be loaded`);
      return null;
    }
    const files = await caseFiles(dir);
    if (files.length === 0) {
      say(`---- ${hook.name}: no tests (add ${dir}/tests/NAME.json)`);
      return [];
    }
    const reports: CaseReport[] = [];
    for (const file of files) {
      const report = await runCase(executor, hook, dir, file);
      reports.push(report);
      const label = `${hook.name}/tests/${file}`;
      if (report.passed) say(`ok   ${label}`);
      else say(`FAIL ${label}\n${report.failures.map((f) => `     ${f}`).join("\n")}`);
    }
    return reports;
  } finally {
    await executor.close();
  }
}

async function caseFiles(dir: string): Promise<string[]> {
  const info = await denoFs.stat(`${dir}/tests`);
  if (info?.kind !== "dir") return [];
  return (await denoFs.readDir(`${dir}/tests`))
    .filter((e) => !e.isDirectory && !e.isSymlink && e.name.endsWith(".json"))
    .map((e) => e.name)
    .sort();
}

async function runCase(
  executor: ReturnType<typeof createExecutor>,
  hook: HookDefinition,
  dir: string,
  file: string,
): Promise<CaseReport> {
  const report = (failures: string[]): CaseReport => ({
    hook: hook.name,
    file: `tests/${file}`,
    passed: failures.length === 0,
    failures,
  });
  let testCase: HookTestCase;
  try {
    const text = await denoFs.readTextFile(`${dir}/tests/${file}`, MAX_CASE_BYTES);
    const parsed = caseSchema.safeParse(JSON.parse(text));
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.join(".") || "(top)";
      const hint = issue.code === "unrecognized_keys" ? didYouMean(issue.keys, where) : "";
      return report([`not a test case: ${where}: ${issue.message}${hint}`]);
    }
    testCase = parsed.data;
  } catch (err) {
    return report([`cannot read the case: ${(err as Error).message}`]);
  }
  const event = {
    event_type: hook.manifest.trigger[0],
    session_id: "hookbox-test",
    ...testCase.event,
  };
  let result: DispatchResult;
  try {
    result = await executor.dispatch(event);
  } catch (err) {
    const line = isHookboxError(err) ? err.toLine() : String(err);
    return report([`the event is not valid: ${line}`]);
  }
  return report(compare(testCase.expect, result, hook.name));
}

/** The keys a case or its `expect` may have (the schema's own). */
const KNOWN_KEYS: Record<string, string[]> = {
  "(top)": Object.keys(caseSchema.shape),
  expect: Object.keys(caseSchema.shape.expect.shape),
};

/** `; did you mean "decision"?` for a key one or two edits from a known one. */
function didYouMean(keys: string[], where: string): string {
  for (const key of keys) {
    const near = nearest(key, KNOWN_KEYS[where] ?? []);
    if (near !== undefined) return `; did you mean "${near}"?`;
  }
  return `; known keys: ${(KNOWN_KEYS[where] ?? []).join(", ")}`;
}

/** Equal as JSON values (object keys in any order). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(rb, k) && sameJson(ra[k], rb[k]));
}

/** Most characters of a value a failure line shows. */
const SHOWN_CHARS = 400;

/** `value` as JSON, cut to {@linkcode SHOWN_CHARS} with how long it was (a case's value can be a megabyte). */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length <= SHOWN_CHARS
    ? text
    : `${text.slice(0, SHOWN_CHARS)}… (${text.length} characters)`;
}

/** What differs between `expect` and `result`, one line each. */
export function compare(
  expect: HookTestCase["expect"],
  result: DispatchResult,
  hookName: string,
): string[] {
  const failures: string[] = [];
  const record = result.hooks.find((h) => h.name === hookName);
  const why = record?.detail ? ` (${record.outcome}: ${record.detail})` : "";
  if (expect.decision !== undefined && result.decision !== expect.decision) {
    failures.push(
      `decision: expected ${expect.decision}, got ${result.decision}` +
        (result.reason ? ` (reason: ${shown(result.reason)})` : why),
    );
  }
  if (
    expect.reason_contains !== undefined && !(result.reason ?? "").includes(expect.reason_contains)
  ) {
    failures.push(
      `reason: expected it to contain ${shown(expect.reason_contains)}, got ${
        shown(result.reason)
      }`,
    );
  }
  for (const field of ["modified_input", "modified_output"] as const) {
    if (!(field in expect)) continue;
    const want = expect[field] ?? null;
    if (!sameJson(result[field], want)) {
      failures.push(
        `${field}: expected ${shown(want)}, got ${shown(result[field])}`,
      );
    }
  }
  if (expect.outcome !== undefined && record?.outcome !== expect.outcome) {
    failures.push(
      `outcome: expected ${expect.outcome}, got ${record?.outcome ?? "no record"}${why}`,
    );
  }
  return failures;
}
