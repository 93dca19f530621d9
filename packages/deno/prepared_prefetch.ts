/**
 * Early compilation of the prepared plugins a one-shot process will likely
 * load. `hookbox dispatch` is spawned once per agent event, and much of its
 * life is spent loading its own code; compiling the 1.9 MB QuickJS engine
 * waited until the hooks were found. The CLI names the kind of event it was
 * given (agent and event name, {@linkcode prefetchPrepared}'s `context`);
 * each run records the prepared entries it loaded for that kind
 * (`<cacheDir>/prepared-recent.json`), and the next run of the same kind
 * starts reading and compiling them on background threads before its own
 * modules load. {@linkcode takePrefetched} hands a result to the disk
 * cache's reader; both go through {@linkcode readPrepared}, which checks the
 * module against the entry's recorded SHA-256.
 *
 * Nothing here decides what runs: an entry is only used when the disk cache
 * looks it up by its key; a wrong guess costs compiling a module unused.
 * Processes that never call {@linkcode prefetchPrepared} (a server, a
 * library user) record nothing.
 *
 * @module
 */

import { fileSignature } from "../host-deno/fs.ts";
import { type LoadedPlugin, runsImage } from "../runtime-wasm/mod.ts";
import { sha256Hex } from "../core/bytes.ts";
import { admitTypes } from "../rewriter/mod.ts";
import { writeAtomic } from "../host-deno/atomic.ts";
import { decodeRuns } from "../edge/bundle_data.ts";

/** Entries recorded per kind of event. */
export const MAX_RECENT = 8;
/** Kinds of event recorded; the oldest recorded is dropped first. */
export const MAX_CONTEXTS = 32;
/** Most bytes read ahead in one process. */
const MAX_PREFETCH_BYTES = 16 * 1024 * 1024;
/** Of those, the most read synchronously (see {@linkcode readPrepared}). */
const MAX_SYNC_BYTES = 4 * 1024 * 1024;
/** 32 kinds × (a ~1.4 KB name + 8 keys) stay well under it. */
const MAX_FILE_BYTES = 128 * 1024;
const KEY = /^[0-9a-f]{64}$/;

/** A prepared entry read and checked: its metadata as written, and the compiled module. */
export interface PreparedEntry {
  /** With `runsSha256`: the entry has a memory image (`.runs`), read into `image`. */
  meta: Omit<LoadedPlugin, "module"> & {
    verified?: string;
    runsSha256?: string;
    runsVerified?: string;
  };
  module: WebAssembly.Module;
}

/**
 * Modules compiled in this process by instrumented SHA-256, held weakly: the
 * entries of JS hooks that share one module (`shareCode`) compile it once.
 */
const compiled = new Map<string, WeakRef<WebAssembly.Module>>();
/** Of those, the compiles under way (entries read ahead together wait for one). */
const compiling = new Map<string, Promise<WebAssembly.Module>>();

/** Remembers `module` as compiled from bytes hashing to `sha256` (a daemon's collected ones go). */
function remember(sha256: string, module: WebAssembly.Module): void {
  if (compiled.size >= 256) {
    for (const [key, ref] of compiled) if (ref.deref() === undefined) compiled.delete(key);
  }
  compiled.set(sha256, new WeakRef(module));
}

/** The module of `bytes`, known to hash to `sha256`: compiled once while it is held. */
function compileKnown(sha256: string, bytes: Uint8Array): Promise<WebAssembly.Module> {
  const held = compiled.get(sha256)?.deref();
  if (held !== undefined) return Promise.resolve(held);
  let pending = compiling.get(sha256);
  if (pending === undefined) {
    pending = WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>);
    compiling.set(sha256, pending);
    pending.then((module) => remember(sha256, module), () => {})
      .finally(() => compiling.delete(sha256));
  }
  return pending;
}

/** A module file changed less than this before a check is not trusted by its signature. */
export const RACY_MS = 2000;

const early = new Map<string, Promise<PreparedEntry | null>>();
/** This process's kind of event, what the file listed for it, and what it has loaded. */
let run: { cacheDir: string; context: string; listed: string[]; loaded: string[] } | null = null;

function listPath(cacheDir: string): string {
  return `${cacheDir}/prepared-recent.json`;
}

/** The recorded lists by kind of event; anything malformed is left out. */
function readLists(cacheDir: string): Map<string, string[]> {
  const lists = new Map<string, string[]>();
  try {
    const text = Deno.readTextFileSync(listPath(cacheDir));
    if (text.length > MAX_FILE_BYTES) return lists;
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return lists;
    for (const [context, list] of Object.entries(value).slice(0, MAX_CONTEXTS)) {
      if (!Array.isArray(list)) continue;
      const keys = list.filter((k): k is string => typeof k === "string" && KEY.test(k));
      lists.set(context, keys.slice(0, MAX_RECENT));
    }
  } catch { /* none yet, or unreadable: nothing to prefetch */ }
  return lists;
}

/**
 * Starts reading and compiling the entries recorded in `cacheDir` for
 * `context` (a name for the kind of event this process handles), and makes
 * this process record what it loads for it. The reads run on Deno's I/O
 * threads and compile and hash on V8's, while the caller goes on loading its
 * modules. Never throws.
 */
export function prefetchPrepared(cacheDir: string, context: string): void {
  const listed = readLists(cacheDir).get(context) ?? [];
  run = { cacheDir, context, listed, loaded: [] };
  let read = 0;
  for (const key of listed) {
    const base = `${cacheDir}/prepared/${key}`;
    early.set(
      base,
      readPrepared(base, {
        admit: (size) => (read += size) <= MAX_PREFETCH_BYTES,
        sync: () => read <= MAX_SYNC_BYTES,
      }),
    );
  }
}

/** The early read of the entry at `base` (once), if one was started. */
export function takePrefetched(base: string): Promise<PreparedEntry | null> | undefined {
  const found = early.get(base);
  early.delete(base);
  return found;
}

/**
 * Notes that the entry `key` of `cacheDir` was loaded. In a process that
 * called {@linkcode prefetchPrepared} for `cacheDir`, the list of its kind of
 * event becomes what this process has loaded so far, written when that is
 * not what was recorded. Never throws.
 */
export async function rememberPrepared(cacheDir: string, key: string): Promise<void> {
  if (run === null || run.cacheDir !== cacheDir || run.loaded.includes(key)) return;
  if (run.loaded.length >= MAX_RECENT) return;
  run.loaded.push(key);
  const { loaded, listed, context } = run;
  if (loaded.every((k, i) => listed[i] === k)) return;
  // Read again just before writing: other kinds' lists may have changed since.
  const lists = readLists(cacheDir);
  lists.delete(context);
  while (lists.size >= MAX_CONTEXTS) lists.delete(lists.keys().next().value!);
  lists.set(context, [...loaded]);
  await writeAtomic(listPath(cacheDir), JSON.stringify(Object.fromEntries(lists))).catch(() => {});
}

/**
 * A name for the kind of event a `hookbox dispatch` command line and its
 * input are about, and for where its hooks come from: the `--agent`,
 * `--event`, `--hooks-dir` and `--work-dir` flags, and the input's first
 * event name field (`hook_event_name`, `event_type`, ...) and working
 * directory (`cwd`, `work_dir`, whose `.agents/hooks` holds project hooks),
 * read loosely: a wrong name only makes a prefetch miss. At most ~1.4 KB.
 */
export function eventContext(args: string[], input: string): string {
  const flags = (name: string) =>
    args.flatMap((a, i) =>
      a === `--${name}`
        ? [args[i + 1] ?? ""]
        : a.startsWith(`--${name}=`)
        ? [a.slice(name.length + 3)]
        : []
    ).join(",").slice(0, 256);
  const head = input.slice(0, 64 * 1024);
  const field = (names: string, value: string) =>
    new RegExp(`"(?:${names})"\\s*:\\s*"(${value})"`).exec(head)?.[1] ?? "";
  const event = field("hook_event_name|hookEventName|event_type|eventType|event", "[\\w.:-]{1,64}");
  const dir = field("cwd|work_dir|workDir", '[^"\\\\]{1,256}');
  return [flags("agent"), flags("event"), flags("hooks-dir"), flags("work-dir"), event, dir]
    .join("|");
}

/**
 * Reads the prepared entry at `base` (`.json` metadata, `.wasm` module) and
 * compiles the module, which must hash to the metadata's
 * `instrumentedSha256` (a damaged or foreign module is refused: null). The
 * hash is skipped while the module file still has the signature (inode,
 * size, modification and change times) recorded after the last check that
 * passed (`verified`), since any write to it changes its change time: hashing
 * the 1.9 MB engine took ~3 ms of CPU that a one-shot start shares with its
 * own loading on a small machine. A check that passes on a file last changed
 * more than `racyMs` earlier records its signature (timestamps may be coarse).
 * `admit(size)` may refuse a module by its size before it is read; `sync()`
 * (after `admit`) says whether to read it synchronously.
 */
export async function readPrepared(
  base: string,
  options: { racyMs?: number; admit?: (size: number) => boolean; sync?: () => boolean } = {},
): Promise<PreparedEntry | null> {
  try {
    // Read synchronously (2–4 ms for the engine), compiling starts at once, on
    // V8's threads. Read asynchronously, the compile waited for the main thread
    // to take the read's completion, which a one-shot CLI did only after
    // loading its modules and finding the hooks (~15 ms later).
    const meta = JSON.parse(Deno.readTextFileSync(`${base}.json`)) as PreparedEntry["meta"];
    if (typeof meta?.instrumentedSha256 !== "string") return null;
    // A module this process compiled or is compiling already (the engine JS hooks share) is not
    // read again where the file still has the signature of its last check: ~1 MB less to read.
    const known = compiled.get(meta.instrumentedSha256)?.deref() ??
      compiling.get(meta.instrumentedSha256);
    if (known !== undefined) {
      const info = Deno.statSync(`${base}.wasm`);
      if (meta.verified === fileSignature(info) && info.size === meta.byteLength) {
        return await withImage(base, meta, await known, info, options.racyMs);
      }
    }
    if (options.admit && !options.admit(Deno.statSync(`${base}.wasm`).size)) return null;
    const bytes = options.sync?.() === false
      ? await Deno.readFile(`${base}.wasm`)
      : Deno.readFileSync(`${base}.wasm`);
    // After the read: a file replaced before it was read has the new file's signature.
    const info = Deno.statSync(`${base}.wasm`);
    const seen = fileSignature(info);
    const trusted = meta.verified === seen && info.size === bytes.length;
    // The engine keeps every function type it sees: a cached module counts against this
    // thread's types as a checked one does (a refusal: prepared again, and refused there).
    try {
      admitTypes(bytes);
    } catch {
      return null;
    }
    // A module this process compiled already (one JS hooks share) is not compiled again; other
    // bytes are compiled while they are hashed.
    const held = compiled.get(meta.instrumentedSha256)?.deref();
    const [sha256, module] = await Promise.all([
      trusted ? meta.instrumentedSha256 : sha256Hex(bytes),
      held ??
        (trusted
          ? compileKnown(meta.instrumentedSha256, bytes)
          : WebAssembly.compile(bytes as Uint8Array<ArrayBuffer>)),
    ]);
    if (sha256 !== meta.instrumentedSha256) return null;
    if (held === undefined && !trusted) remember(sha256, module);
    return await withImage(
      base,
      { ...meta, byteLength: bytes.length },
      module,
      info,
      options.racyMs,
      trusted,
    );
  } catch {
    return null;
  }
}

/**
 * The entry at `base` with its compiled `module` (from a `.wasm` file whose
 * stat is `info`, `trusted` to its recorded signature or checked) and the
 * memory image of a shared module's plugin, checked (or trusted) as the
 * module is; records the signatures of files checked now. Null when the
 * image does not hash to its recorded SHA-256.
 */
async function withImage(
  base: string,
  meta: PreparedEntry["meta"],
  module: WebAssembly.Module,
  info: Deno.FileInfo,
  racyMs = RACY_MS,
  trusted = true,
): Promise<PreparedEntry | null> {
  let image: LoadedPlugin["image"];
  let runsSeen: string | undefined;
  let runsTrusted = true;
  let changed = info.ctime?.getTime() ?? Infinity;
  if (meta.runsSha256 !== undefined) {
    const data = Deno.readFileSync(`${base}.runs`);
    const runsInfo = Deno.statSync(`${base}.runs`);
    runsSeen = fileSignature(runsInfo);
    runsTrusted = meta.runsVerified === runsSeen && runsInfo.size === data.length;
    if (!runsTrusted && await sha256Hex(data) !== meta.runsSha256) return null;
    image = runsImage(decodeRuns(data.buffer, data.byteOffset));
    changed = Math.max(changed, runsInfo.ctime?.getTime() ?? Infinity);
  }
  if ((!trusted || !runsTrusted) && Date.now() - changed > racyMs) {
    const verified = {
      ...meta,
      verified: fileSignature(info),
      ...(runsSeen ? { runsVerified: runsSeen } : {}),
    };
    await writeAtomic(`${base}.json`, JSON.stringify(verified)).catch(() => {});
  }
  return { meta: { ...meta, ...(image ? { image } : {}) }, module };
}
