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
 * per cache folder (a lock file the command removes as it ends), and each
 * hook's sources at most once per {@linkcode RETRY_MS}, so a repository's
 * hooks that never finish building keep at most one low-priority core busy.
 *
 * @module
 */
import { sha256Hex } from "../core/bytes.ts";
import { canBoundCommands } from "../host-deno/outlive.ts";
import { niceCommand } from "../host-deno/thread_priority.ts";
import { buildTime } from "./_build_time.ts";

/** The longest a handed-over build runs before it is killed, ms. */
export const LATER_MS = 180_000;
/** How long the same sources are not handed over again, ms (as long as a failed build is kept). */
export const RETRY_MS = 600_000;
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
 * handed-over build under way for the cache, the same sources handed over in
 * the last {@linkcode RETRY_MS}, no `setsid`/`timeout` here). `sources`: the
 * entry's text, which names the attempt. True when it started.
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
    const tried = `${folder}/${await sha256Hex(`${hookDir}\0${sources}`)}.tried`;
    const when = (await Deno.stat(tried).catch(() => null))?.mtime?.getTime();
    if (when !== undefined && Date.now() - when < RETRY_MS) return false;
    const lock = `${folder}/building.lock`;
    if (!(await takeLock(lock))) return false;
    await Deno.writeTextFile(tried, hookDir);
    await sweep(folder);
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
    try {
      new Deno.Command(SETSID_BIN, {
        args: ["/bin/sh", "-c", THEN_UNLOCK, "sh", out, lock, seconds, cmd, ...args],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn().unref();
    } catch (err) {
      await Deno.remove(lock).catch(() => {});
      await Deno.remove(out, { recursive: true }).catch(() => {});
      throw err;
    }
    return true;
  } catch {
    // A cache folder that cannot be written: the call's own failure says what was not built.
    return false;
  }
}

/** Takes the lock file (a stale one, older than a build can run, is taken over); false if held. */
async function takeLock(lock: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await Deno.writeTextFile(lock, String(Deno.pid), { createNew: true });
      return true;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
      const at = (await Deno.stat(lock).catch(() => null))?.mtime?.getTime();
      if (at !== undefined && Date.now() - at < LATER_MS + 10_000) return false;
      await Deno.remove(lock).catch(() => {});
    }
  }
  return false;
}

/** Removes the attempts older than {@linkcode RETRY_MS} (a folder of a few small files). */
async function sweep(folder: string): Promise<void> {
  for await (const entry of Deno.readDir(folder)) {
    if (!entry.name.endsWith(".tried")) continue;
    const path = `${folder}/${entry.name}`;
    const at = (await Deno.stat(path).catch(() => null))?.mtime?.getTime();
    if (at !== undefined && Date.now() - at >= RETRY_MS) await Deno.remove(path).catch(() => {});
  }
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
