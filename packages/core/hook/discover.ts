/**
 * Discovery (SPEC §2): scans the platform, user and project folders, validates
 * every hook, applies the override rules, and reports what it skipped.
 *
 * @module
 */
import { type ErrorCode, HookboxError, isHookboxError } from "../errors.ts";
import { type DirEntry, type HostFs, joinPath, type PathInfo } from "../host.ts";
import {
  confined,
  MAX_FOLDER_ENTRIES,
  MAX_FOLDER_MANIFEST_CHARS,
  MAX_FOLDER_MATCHER_INSTRUCTIONS,
  MAX_HOOKS_PER_FOLDER,
  MAX_MANIFEST_BYTES,
} from "./files.ts";
import { resolveEntry } from "./entry.ts";
import type { HookDefinition, HookLevel } from "./types.ts";
import { loadZod } from "../schema/_zod.ts";
import { loadRe2 } from "../schema/_re2.ts";
import { estimateProgram } from "../schema/_matcher_size.ts";
import { needsRegexEngine } from "../schema/matcher.ts";

/** A hook folder that was skipped, and why. Never silent. */
export interface HookProblem {
  /** The stable error code. */
  code: ErrorCode;
  /** What is wrong. */
  message: string;
  /** The hook folder or file. */
  path: string;
  /** The frontmatter field, when one is at fault. */
  field?: string;
  /** The level of the folder it was found in. */
  level?: HookLevel;
}

/** Hooks found plus the problems met on the way. */
export interface Discovery {
  /** The hooks found, validated. */
  hooks: HookDefinition[];
  /** The hook folders skipped, and why. */
  problems: HookProblem[];
}

/**
 * Loads one hook folder; throws a HookboxError with code, path and field.
 * `read` counts the characters of HOOK.md read and the instructions of the
 * matchers validated (a folder scan's budgets).
 */
export async function loadHook(
  fs: HostFs,
  dir: string,
  level: HookLevel,
  read?: { chars: number; instructions?: number },
): Promise<HookDefinition> {
  const mdPath = joinPath(dir, "HOOK.md");
  if ((await fs.stat(mdPath))?.kind !== "file") {
    throw new HookboxError("HOOK_MANIFEST_MISSING", "hook folder has no HOOK.md", { path: dir });
  }
  await confined(fs, dir, mdPath);
  // The YAML parser loads only when a HOOK.md is read: the one-shot CLI's cached scans need none.
  // Validating the manifest needs zod and, for a matcher pattern, RE2 (loaded on
  // demand in the bundled CLI, see `schema/_zod.ts`).
  const [{ parseHookMd }] = await Promise.all([import("./frontmatter.ts"), loadZod(), loadRe2()]);
  const text = await fs.readTextFile(mdPath, MAX_MANIFEST_BYTES);
  if (read !== undefined) read.chars += text.length;
  const { manifest, body } = parseHookMd(text, mdPath);
  if (read?.instructions !== undefined) {
    for (const pattern of [manifest.matcher?.tool, manifest.matcher?.pattern]) {
      if (pattern !== undefined && needsRegexEngine(pattern)) {
        read.instructions += estimateProgram(pattern);
      }
    }
  }
  const folder = dir.replace(/\/+$/, "").split("/").pop() ?? "";
  if (manifest.name !== folder) {
    throw new HookboxError(
      "HOOK_NAME_MISMATCH",
      `name "${manifest.name}" must equal the folder name "${folder}"`,
      { path: mdPath, field: "name" },
    );
  }
  const entry = await resolveEntry(fs, dir, manifest);
  if (entry.runtime !== "prompt") await confined(fs, dir, entry.path);
  return { name: manifest.name, level, dir, manifest, body, entry };
}

/**
 * Scans `path`: a hook folder itself (it has a HOOK.md) or a folder of hook
 * folders. A missing user or project folder yields nothing (having none is
 * normal); a missing platform folder is reported, since someone named it for
 * its hooks (a moved folder would otherwise turn its guards off without a
 * word); everything else is reported.
 */
export async function scanPath(fs: HostFs, path: string, level: HookLevel): Promise<Discovery> {
  // A folder the file system cannot resolve (a link to itself, a name too long) is that
  // folder's problem: it must not end the call, or a repository's one link would keep
  // every other level's guards from running.
  let info: PathInfo | null;
  try {
    info = await fs.stat(path);
  } catch (err) {
    if (!isIoError(err)) throw err;
    return { hooks: [], problems: [unreadable(err, path, level)] };
  }
  if (info === null) {
    if (level !== "platform") return { hooks: [], problems: [] };
    const why = "no such folder: the platform hooks named there did not run";
    return { hooks: [], problems: [problem("HOOK_DIR_UNREADABLE", why, path, level)] };
  }
  if (info.kind !== "dir") {
    return { hooks: [], problems: [problem("HOOK_DIR_UNREADABLE", "not a folder", path, level)] };
  }
  if (await looksLikeHook(fs, path).catch(() => false)) return await collect(fs, [path], level);
  let entries;
  try {
    entries = await fs.readDir(path, MAX_FOLDER_ENTRIES);
  } catch (err) {
    return {
      hooks: [],
      problems: [problem("HOOK_DIR_UNREADABLE", (err as Error).message, path, level)],
    };
  }
  if (entries.length > MAX_FOLDER_ENTRIES) {
    const msg = `more than ${MAX_FOLDER_ENTRIES} files and folders; none of its hooks is read ` +
      `(a folder of hooks may hold at most ${MAX_FOLDER_ENTRIES} entries)`;
    return { hooks: [], problems: [problem("HOOK_TOO_MANY", msg, path, level)] };
  }
  return await collectEntries(fs, path, entries, level);
}

/**
 * Every entry of a folder of hooks: a hidden entry (`.name`) or a plain file
 * (a README, say) is ignored; a folder is a hook or a problem. A symbolic
 * link to a folder is followed for platform folders, which the operator
 * controls, and reported as `HOOK_PATH_OUTSIDE` for user and project folders,
 * whose owner could point it anywhere. Past {@linkcode MAX_HOOKS_PER_FOLDER}
 * folders the rest are reported as one `HOOK_TOO_MANY` problem.
 */
async function collectEntries(
  fs: HostFs,
  path: string,
  entries: DirEntry[],
  level: HookLevel,
): Promise<Discovery> {
  const dirs: string[] = [];
  const problems: HookProblem[] = [];
  for (const e of [...entries].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name.startsWith(".")) continue;
    const full = joinPath(path, e.name);
    if (e.isSymlink) {
      let target: PathInfo | null;
      try {
        target = await fs.stat(full);
      } catch (err) {
        if (!isIoError(err)) throw err;
        problems.push(unreadable(err, full, level));
        continue;
      }
      if (target?.kind !== "dir") continue; // a link to a file, or dangling
      if (level !== "platform") {
        const msg = "hook folder is a symbolic link; only platform folders may link hooks";
        problems.push(problem("HOOK_PATH_OUTSIDE", msg, full, level));
        continue;
      }
    } else if (!e.isDirectory) continue;
    dirs.push(full);
  }
  if (dirs.length > MAX_HOOKS_PER_FOLDER) {
    const msg = `${dirs.length} hook folders, at most ${MAX_HOOKS_PER_FOLDER} are read; ` +
      `skipped from ${dirs[MAX_HOOKS_PER_FOLDER]} on`;
    problems.push(problem("HOOK_TOO_MANY", msg, path, level));
    dirs.length = MAX_HOOKS_PER_FOLDER;
  }
  const found = await collect(fs, dirs, level);
  return { hooks: found.hooks, problems: [...problems, ...found.problems] };
}

/** A hook folder: it has a HOOK.md, or an entry (`plugin.wasm`, `scripts/`) without one. */
async function looksLikeHook(fs: HostFs, path: string): Promise<boolean> {
  const [md, plugin, scripts] = await Promise.all(
    ["HOOK.md", "plugin.wasm", "scripts"].map((f) => fs.stat(joinPath(path, f))),
  );
  return md?.kind === "file" || plugin?.kind === "file" || scripts?.kind === "dir";
}

/** Hook folders read at once: start-up latency without opening a thousand files together. */
const PARALLEL_LOADS = 16;

/**
 * Loads `dirs` in batches. Past {@linkcode MAX_FOLDER_MANIFEST_CHARS} of
 * HOOK.md text read, or {@linkcode MAX_FOLDER_MATCHER_INSTRUCTIONS} of
 * matcher patterns compiled, the folders after the batch are reported as one
 * `HOOK_TOO_MANY` problem (checked between batches: which folders are read
 * never depends on which read finished first).
 */
async function collect(fs: HostFs, dirs: string[], level: HookLevel): Promise<Discovery> {
  const found: Discovery = { hooks: [], problems: [] };
  const read = { chars: 0, instructions: 0 };
  for (let i = 0; i < dirs.length; i += PARALLEL_LOADS) {
    const over = read.chars > MAX_FOLDER_MANIFEST_CHARS
      ? `HOOK.md files read before it hold ${read.chars} characters (at most ` +
        `${MAX_FOLDER_MANIFEST_CHARS} are read from one folder)`
      : read.instructions > MAX_FOLDER_MATCHER_INSTRUCTIONS
      ? `matcher patterns of the hooks read before it come to about ${read.instructions} ` +
        `instructions once compiled (at most ${MAX_FOLDER_MATCHER_INSTRUCTIONS} for one folder; ` +
        `RE2 writes a counted repetition out one copy per count: use + or * where you can)`
      : null;
    if (over !== null) {
      const msg = `skipped, with the ${dirs.length - i - 1} hook folders after it: the ${over}`;
      found.problems.push(problem("HOOK_TOO_MANY", msg, dirs[i]!, level));
      break;
    }
    const batch = dirs.slice(i, i + PARALLEL_LOADS);
    const loaded = await Promise.allSettled(batch.map((dir) => loadHook(fs, dir, level, read)));
    for (const [j, result] of loaded.entries()) {
      if (result.status === "fulfilled") found.hooks.push(result.value);
      else if (isHookboxError(result.reason)) {
        found.problems.push({ ...problemOf(result.reason, batch[j]!), level });
      } else if (isIoError(result.reason)) {
        // The folder changed while it was read (removed, say), or a link in it cannot be
        // resolved: that folder is skipped and reported; the other hooks still load.
        found.problems.push(unreadable(result.reason, batch[j]!, level));
      } else throw result.reason;
    }
  }
  return found;
}

/** An error from the file system (`ENOENT`, `EACCES`, ...: Deno's and Node's both carry the code). */
function isIoError(err: unknown): err is Error {
  const code = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  return typeof code === "string" && /^E[A-Z]+$/.test(code);
}

/**
 * Applies the override rules across levels: a project hook replaces a user
 * hook of the same name (and says so: `replaces`); nothing replaces a
 * platform hook. A user hook that is a closed guard (`on_error: closed`)
 * replaced by a repository's hook is also reported as a problem: the guard
 * the user installed does not run there, and nothing else would say so.
 */
export function mergeLevels(levels: Discovery[]): Discovery {
  const byName = new Map<string, HookDefinition>();
  const problems = levels.flatMap((l) => l.problems);
  for (let hook of levels.flatMap((l) => l.hooks)) {
    const prior = byName.get(hook.name);
    if (prior?.level === "user" && hook.level === "project") {
      hook = { ...hook, replaces: prior.dir };
      if (prior.manifest.on_error === "closed") {
        problems.push(problem(
          "HOOK_NAME_CONFLICT",
          `the project hook "${hook.name}" (${hook.dir}) replaces this user hook, an ` +
            `on_error: closed guard, so the guard does not run for this project; to keep a ` +
            `guard no repository can replace, give its folder to --hooks-dir (platform level)`,
          prior.dir,
          prior.level,
        ));
      }
    } else if (prior && (prior.level === "platform" || prior.level === hook.level)) {
      problems.push(problem(
        "HOOK_NAME_CONFLICT",
        `hook "${hook.name}" is already defined at ${prior.level} level (${prior.dir}); ` +
          (prior.level === "platform" ? "platform hooks cannot be replaced" : "first one wins"),
        hook.dir,
        hook.level,
      ));
      continue;
    }
    byName.set(hook.name, hook);
  }
  return { hooks: [...byName.values()], problems };
}

/** `HOOK_DIR_UNREADABLE` for `path`, with the file system's words. */
function unreadable(err: Error, path: string, level: HookLevel): HookProblem {
  return problem(
    "HOOK_DIR_UNREADABLE",
    `hook folder could not be read: ${err.message}`,
    path,
    level,
  );
}

function problem(code: ErrorCode, message: string, path: string, level: HookLevel): HookProblem {
  return { code, message, path, level };
}

function problemOf(err: HookboxError, dir: string): HookProblem {
  return {
    code: err.code,
    message: err.message,
    path: err.path ?? dir,
    ...(err.field === undefined ? {} : { field: err.field }),
  };
}
