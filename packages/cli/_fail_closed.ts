/**
 * What `hookbox dispatch` (plain and `--agent`) does with what it could not
 * evaluate or run (SPEC §4.7): find the closed guard an unreadable event
 * falls under, turn failures into blocks under `--strict`, and say every
 * failure in one line.
 */
import type { ExecutorOptions } from "../deno/executor.ts";
import { closedGuard, type PayloadHead } from "../agents/unreadable.ts";
import type { DispatchResult } from "../core/dispatch/result.ts";
import { isHookboxError, oneLine } from "../core/errors.ts";
import type { HookProblem } from "../core/hook/discover.ts";
import { loadRe2 } from "../core/schema/loaders.ts";
import { readFileEnd } from "../host-deno/fs.ts";
import type { EventType } from "../core/schema/event_types.ts";
import { MAX_WORK_DIR } from "../core/schema/event.ts";
import { type DispatchFlags, executorFor } from "./_executor.ts";
import { problemLine } from "./validate.ts";

/**
 * One line for what kept the hooks from answering: a hookbox error's code
 * and words, anything else (a fault of hookbox's own) as `INTERNAL`.
 */
export function lineOf(err: unknown): string {
  if (isHookboxError(err)) return err.toLine();
  return `INTERNAL: ${oneLine(String((err as Error)?.message ?? err))}`;
}

/** Outcomes that are a failed (or skipped) hook. */
const FAILED: ReadonlySet<string> = new Set(["error", "timeout", "limit", "skipped"]);

/**
 * The name of the guard that turns an unreadable event of `type` (null:
 * unknown) into a block, or null when none does: a synchronous hook that
 * could apply and is `on_error: closed` (any such hook under `strict`), a
 * hook folder that failed to load but says `on_error: closed`, or, under
 * `strict`, any folder that failed to load.
 */
export async function guardOfUnreadable(
  values: DispatchFlags & { strict?: boolean | undefined },
  extra: ExecutorOptions,
  type: EventType | null,
  head: PayloadHead,
): Promise<string | null> {
  // A `cwd` too long to name a folder is the payload's fault, not a place to look for hooks.
  const cwd = head.cwd?.startsWith("/") && head.cwd.length <= MAX_WORK_DIR ? head.cwd : undefined;
  const dir = values["work-dir"] ?? cwd;
  const { executor, workDir } = executorFor(dir ? { work_dir: dir } : {}, values, extra);
  try {
    const hooks = await executor.hooks(workDir);
    const problems = await executor.problems(workDir);
    await loadRe2();
    const strict = values.strict === true;
    return closedGuard(hooks, type, head.tool, strict)?.name ??
      (strict && problems.length > 0
        ? "hookbox"
        : (await brokenClosedGuard(problems))?.name ?? null);
  } finally {
    await executor.close();
  }
}

/**
 * A hook folder that could not load but whose HOOK.md says `on_error:
 * closed` (read as text: it did not parse), with its name: a broken closed
 * guard guards every event it might have guarded. Null when there is none.
 */
async function brokenClosedGuard(
  problems: readonly HookProblem[],
): Promise<{ name: string; problem: HookProblem } | null> {
  for (const p of problems) {
    const file = p.path.endsWith("HOOK.md") ? p.path : `${p.path}/HOOK.md`;
    // Its first 64 KiB, of a regular file only: the folder is a repository's, and its HOOK.md
    // may be a link to `/dev/zero` or a FIFO (read whole or opened plainly, a hang or a crash).
    const head = await readFileEnd(file, 64 * 1024, { end: "head", follow: true });
    if (head === null) continue;
    const text = new TextDecoder().decode(head.bytes);
    if (/^on_error:\s*["']?closed\b/m.test(text)) {
      return { name: file.split("/").at(-2) ?? p.path, problem: p };
    }
  }
  return null;
}

/**
 * An allowed `result` as the block of a closed guard that could not load: a
 * hook folder skipped at discovery whose HOOK.md says `on_error: closed`
 * blocks as a closed hook that fails does (SPEC §2: a skipped hook blocks if
 * `on_error: closed`), so a broken guard never lets through what it was
 * there to stop. A name conflict is no broken guard: the hook it yields to
 * runs (a platform hook, or the project's hook that replaces a user's).
 */
export async function brokenGuardResult(
  result: DispatchResult,
  problems: readonly HookProblem[],
): Promise<DispatchResult> {
  if (result.decision === "block" || problems.length === 0) return result;
  const broken = await brokenClosedGuard(problems.filter((p) => p.code !== "HOOK_NAME_CONFLICT"));
  if (broken === null) return result;
  return blocked(
    result,
    broken.name,
    `hook "${broken.name}" says on_error: closed but could not load, so it blocks until it is ` +
      `fixed (${problemLine(broken.problem).split("\n")[0]}; hookbox validate shows why)`,
  );
}

/** An allowed `result` as a block by `by` for `reason`. */
export function blocked(result: DispatchResult, by: string, reason: string): DispatchResult {
  return { ...result, decision: "block", blocked_by: by, reason };
}

/** Under `--strict`, an allowed result with a failed hook or a skipped folder blocks. */
export function strictResult(
  result: DispatchResult,
  problems: readonly HookProblem[],
): DispatchResult {
  if (result.decision === "block") return result;
  const failed = result.hooks.find((h) => FAILED.has(h.outcome));
  if (failed) {
    const why = `${failed.outcome}: ${failed.detail ?? "unknown"}`;
    return blocked(
      result,
      failed.name,
      `hook "${failed.name}" failed (${why}) and hookbox runs --strict`,
    );
  }
  if (problems.length > 0) {
    return blocked(result, "hookbox", `${problemLine(problems[0]!)} (hookbox runs --strict)`);
  }
  return result;
}

/** Skipped hook folders named one by one; past them, one line counts the rest. */
const PROBLEM_LINES = 20;

/**
 * One line per failed hook and per skipped hook folder (a problem's code
 * frame left out: `hookbox validate` prints it), at most
 * {@linkcode PROBLEM_LINES} folders and then one line for the rest.
 */
export function failureLines(result: DispatchResult, problems: readonly HookProblem[]): string[] {
  const lines = result.hooks.filter((h) => FAILED.has(h.outcome)).map((h) =>
    `hookbox: hook "${h.name}" (${h.level}) ${h.outcome}: ${h.detail ?? "no detail"}`
  );
  // An ok call with a detail is a warning (stdout that looked like JSON but was not).
  for (const h of result.hooks) {
    if (h.outcome === "ok" && h.detail) {
      lines.push(`hookbox: warning: hook "${h.name}" (${h.level}): ${h.detail}`);
    }
  }
  for (const p of problems.slice(0, PROBLEM_LINES)) {
    const line = problemLine(p).split("\n")[0]!;
    lines.push(`hookbox: warning: ${line} (skipped)`);
  }
  if (problems.length > PROBLEM_LINES) {
    lines.push(
      `hookbox: warning: ${problems.length - PROBLEM_LINES} more hook folders skipped ` +
        `(hookbox validate lists them all)`,
    );
  }
  return lines;
}
