/**
 * Builds a call had no building time for, finished in a process of their own.
 *
 * A process that answers agents (`dispatch`, the daemon) stops a build once
 * its building time is spent (`_build_time.ts`), and a one-shot call's
 * process kills what it still builds when it exits: on a machine busy enough
 * that a hook's first build takes longer than that, every call would start
 * the build again and stop it again, and the hook would never run (a closed
 * guard would block every call). The call hands the build over instead:
 * `hookbox compile HOOK_DIR --cache-dir CACHE`, detached from the call (its
 * own session, so an agent that kills its hook command's process group does
 * not stop it), at low priority, killed after {@linkcode LATER_MS} whatever
 * happens, its plugin landing in the cache for a later call. One at a time
 * per hooks folder (a lock file the command removes as it ends), at most
 * {@linkcode MAX_AT_ONCE} per cache folder, and each hook's sources at most
 * once per {@linkcode RETRY_MS}: a repository's hooks that never finish
 * building keep at most one low-priority core busy, and cannot keep the
 * user's or the platform's hooks (another folder) from being built.
 *
 * @module
 */
import { sha256Hex } from "../core/bytes.ts";
import { parentOf } from "../host-deno/atomic.ts";
import { fileSignature } from "../host-deno/fs.ts";
import { canBoundCommands } from "../host-deno/outlive.ts";
import { niceCommand } from "../host-deno/nice.ts";
import { buildTime } from "./_build_time.ts";
import { holderGone, processName } from "./_js_lock.ts";

/** The longest a handed-over build runs before it is killed, ms. */
export const LATER_MS = 180_000;
/** A lock older than this is left by a build that can no longer be running, ms. */
const STALE_MS = LATER_MS + 10_000;
/** How long the same sources are not handed over again, ms (as long as a failed build is kept). */
export const RETRY_MS = 600_000;
/** Handed-over builds under way at once per cache folder, at most (one per hooks folder). */
export const MAX_AT_ONCE = 3;
/** Entries of a hook folder looked at to tell its sources apart, at most. */
const MAX_ENTRIES = 4096;
/** Heap of the building process, MiB (the AssemblyScript compiler's). */
export const BUILD_HEAP_MB = 1024;
/** The program that starts a command in a session of its own (util-linux). */
const SETSID_BIN = "/usr/bin/setsid";
/**
 * Runs the rest of its arguments under coreutils' `timeout`, then removes the
 * output folder (`$1`) and the lock (`$2`) however the command ended.
 */
const THEN_UNLOCK =
  'out=$1; lock=$2; shift 2; /usr/bin/timeout -s KILL "$@"; rm -rf -- "$out"; rm -f -- "$lock"';

/**
 * This CLI's own command line (the bundled one, or the source's `main.ts`),
 * with a heap of `heapMb`.
 */
export function cliCommand(heapMb: number): [string, string[]] {
  const bundled = /\/dist\/cli\/[^/]+\.js$/.test(Deno.mainModule);
  const cli = bundled ? Deno.mainModule : new URL("../cli/main.ts", import.meta.url).href;
  const config = bundled
    ? ["--no-config"]
    : ["--config", new URL("../../deno.json", import.meta.url).pathname];
  return [Deno.execPath(), [
    "run",
    "-A",
    ...config,
    `--v8-flags=--max-old-space-size=${heapMb}`,
    cli,
  ]];
}

/**
 * Starts `hookbox compile hookDir` in the background into `cacheDir` when
 * this process's building time is bounded and nothing stops it (another
 * handed-over build under way for a hook of the same folder, or
 * {@linkcode MAX_AT_ONCE} for the cache, the same sources handed over in the
 * last {@linkcode RETRY_MS}, no `setsid`/`timeout` here). `sources`: the
 * entry's text, which names the attempt with what the hook's folder holds.
 * True when it started.
 */
export async function buildLater(
  hookDir: string,
  cacheDir: string,
  sources: string,
): Promise<boolean> {
  if (!buildTime.bounded || !canBoundCommands() || !hasSetsid()) return false;
  const folder = `${cacheDir}/build-later`;
  try {
    await Deno.mkdir(folder, { recursive: true });
    // One per hooks folder: the folder the hook's folder is in (its scope's).
    const lock = `${folder}/${(await sha256Hex(parentOf(hookDir))).slice(0, 32)}.lock`;
    await clearKilled(lock, folder);
    const signature = await folderSignature(hookDir);
    const tried = `${folder}/${await sha256Hex(`${hookDir}\0${signature}\0${sources}`)}.tried`;
    const when = (await Deno.stat(tried).catch(() => null))?.mtime?.getTime();
    if (when !== undefined && Date.now() - when < RETRY_MS) return false;
    if ((await sweep(folder)) >= MAX_AT_ONCE || !(await takeLock(lock))) return false;
    await Deno.writeTextFile(tried, hookDir);
    const out = await Deno.makeTempDir({ prefix: "hookbox-build-later-" });
    const [cli, cliArgs] = cliCommand(BUILD_HEAP_MB);
    const seconds = `${Math.ceil(LATER_MS / 1000)}s`;
    const { cmd, args } = niceCommand(cli, [
      ...cliArgs,
      "compile",
      hookDir,
      "--cache-dir",
      cacheDir,
      "--out",
      out,
    ]);
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(SETSID_BIN, {
        args: ["/bin/sh", "-c", THEN_UNLOCK, "sh", out, lock, seconds, cmd, ...args],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
    } catch (err) {
      await Deno.remove(lock).catch(() => {});
      await Deno.remove(out, { recursive: true }).catch(() => {});
      throw err;
    }
    child.unref();
    // The lock names the build's process (setsid runs the shell in its own place) and its
    // attempt: a build killed before its shell removed the lock is seen as gone at once.
    await Deno.writeTextFile(lock, `${processName(child.pid)}\n${tried}`).catch(() => {});
    return true;
  } catch {
    // A cache folder that cannot be written: the call's own failure says what was not built.
    return false;
  }
}

/**
 * What `hookDir` holds, as names, sizes and times (a hook's sources are
 * confined to its folder): an edit to any of its files is another attempt.
 * At most {@linkcode MAX_ENTRIES} entries, breadth first.
 */
async function folderSignature(hookDir: string): Promise<string> {
  const parts: string[] = [];
  const queue = [""];
  let seen = 0;
  while (queue.length > 0 && seen < MAX_ENTRIES) {
    const rel = queue.shift()!;
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const entry of Deno.readDir(`${hookDir}${rel}`)) {
        entries.push(entry);
        if (++seen >= MAX_ENTRIES) break;
      }
    } catch {
      parts.push(`${rel}:unreadable`);
      continue;
    }
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    for (const entry of entries) {
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory) queue.push(path);
      const info = await Deno.stat(`${hookDir}${path}`).catch(() => null);
      parts.push(`${path}:${info === null ? "-" : fileSignature(info)}`);
    }
  }
  return parts.join("\n");
}

/**
 * Takes the lock file, named for this process until its build starts (one
 * left by a process that is gone, or older than a build can run, is taken
 * over); false if held.
 */
async function takeLock(lock: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await Deno.writeTextFile(lock, processName(Deno.pid), { createNew: true });
      return true;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      if (await lockHeld(lock)) return false;
      await Deno.remove(lock).catch(() => {});
    }
  }
  return false;
}

/**
 * Whether the lock file at `lock` belongs to a build under way: younger than
 * a build can run, and its process not gone (where it can be looked up).
 */
async function lockHeld(lock: string): Promise<boolean> {
  const at = (await Deno.stat(lock).catch(() => null))?.mtime?.getTime();
  if (at === undefined || Date.now() - at >= STALE_MS) return false;
  return holderGone(await Deno.readTextFile(lock).catch(() => null)) !== true;
}

/**
 * A lock whose build was killed (its process gone, the lock left behind: the
 * shell that removes it was killed too) is removed with the attempt it
 * names, so the next call hands that build over again at once rather than
 * after {@linkcode RETRY_MS} (a closed guard not built blocks meanwhile).
 */
async function clearKilled(lock: string, folder: string): Promise<void> {
  const text = await Deno.readTextFile(lock).catch(() => null);
  if (text === null || holderGone(text) !== true) return;
  const tried = text.split("\n")[3] ?? "";
  await Deno.remove(lock).catch(() => {});
  // Only an attempt file of this folder, as this module names them.
  if (parentOf(tried) === folder && /^[0-9a-f]{64}\.tried$/.test(tried.slice(folder.length + 1))) {
    await Deno.remove(tried).catch(() => {});
  }
}

/**
 * Removes the attempts older than {@linkcode RETRY_MS} (a folder of a few
 * small files); returns how many builds hold a lock.
 */
async function sweep(folder: string): Promise<number> {
  let building = 0;
  for await (const entry of Deno.readDir(folder)) {
    const lock = entry.name.endsWith(".lock");
    if (!lock && !entry.name.endsWith(".tried")) continue;
    const path = `${folder}/${entry.name}`;
    if (lock) {
      building += (await lockHeld(path)) ? 1 : 0;
      continue;
    }
    const at = (await Deno.stat(path).catch(() => null))?.mtime?.getTime();
    if (at !== undefined && Date.now() - at >= RETRY_MS) await Deno.remove(path).catch(() => {});
  }
  return building;
}

let setsid: boolean | undefined;

function hasSetsid(): boolean {
  if (setsid === undefined) {
    try {
      setsid = Deno.statSync(SETSID_BIN).isFile;
    } catch {
      setsid = false;
    }
  }
  return setsid;
}
