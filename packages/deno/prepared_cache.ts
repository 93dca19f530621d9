/**
 * A disk cache of prepared (validated, instrumented) plugins for the one-shot
 * CLI: an agent spawns `hookbox dispatch` once per event, and instrumenting
 * the 1.9 MB QuickJS engine on every spawn was most of its start-up. Entries
 * are keyed by the SHA-256 of the plugin's bytes, the limits and isolation
 * that shape the instrumentation, the pin, and a fingerprint of the rewriter's
 * own source — so an edited plugin, other limits or a changed rewriter never
 * reuse an entry. A read entry is checked against its recorded SHA-256
 * (corruption), or, once a check passed, by its file's signature (inode,
 * size, times: see `readPrepared`); the cache directory must be as trusted
 * as the hookbox code itself (it holds modules that run without being
 * instrumented again).
 *
 * With `shareCode`, a plugin that runs fresh and differs from others only in
 * its data (every JS hook: the QuickJS engine and its script's snapshot) is
 * written as the shared module (the same bytes for all of them, compiled
 * once per process) and its memory image (`.runs`, checked against the
 * SHA-256 its metadata records): a call with two JS hooks compiled the
 * engine twice (15–20 ms each on one compile thread).
 *
 * When the compile caches can name a JS or AssemblyScript plugin without
 * reading it (`identify`), a small alias file maps that name (with the same
 * limits, isolation, pin and rewriter) to the entry, so a hit reads neither
 * the compiled plugin nor hashes it.
 *
 * @module
 */
import type { HookDefinition } from "../core/hook/types.ts";
import type { EffectiveLimits } from "../core/runtime/types.ts";
import { type LoadedPlugin, preparePlugin, runsImage } from "../runtime-wasm/mod.ts";
import { sha256Hex, sha256HexOf } from "../core/bytes.ts";
import { readPrepared, rememberPrepared, takePrefetched } from "./prepared_prefetch.ts";
import { encodeRuns } from "../edge/bundle_data.ts";
import { fileSignature } from "../host-deno/fs.ts";
import { writeAtomic } from "../host-deno/atomic.ts";
import { trimCacheAfterWrite } from "../host-deno/cache_trim.ts";

/** Format of the cache entries. */
const FORMAT = 2;

/**
 * Most entries one loader remembers compiled (a daemon's, between calls),
 * each held weakly: the runtime's kept plugins (`keptPluginBytes`) alone
 * hold them alive.
 */
const KEPT_ENTRIES = 64;

/** Set by `scripts/build_cli.ts` in the bundled CLI: {@linkcode rewriterSourceHash} at build time. */
declare const __HOOKBOX_REWRITER_HASH__: string | undefined;

/**
 * SHA-256 over the rewriter's and loader's sources (baked in at build time in
 * the bundled CLI); null when they cannot be read (then no cache).
 */
function rewriterFingerprint(): Promise<string | null> {
  const baked = typeof __HOOKBOX_REWRITER_HASH__ === "string" ? __HOOKBOX_REWRITER_HASH__ : null;
  return codeFingerprint(baked, REWRITER_DIRS);
}

const REWRITER_DIRS = ["rewriter/", "runtime-wasm/"];
const fingerprints = new Map<string, Promise<string | null>>();

/**
 * `baked` (a hash the bundled CLI was built with), else {@linkcode sourceHash}
 * of `dirs` under this checkout's `packages/`, once per process; null when the
 * sources cannot be read.
 */
export function codeFingerprint(baked: string | null, dirs: string[]): Promise<string | null> {
  if (baked !== null) return Promise.resolve(baked);
  const key = dirs.join("\0");
  let found = fingerprints.get(key);
  if (found === undefined) {
    found = sourceHash(new URL("../", import.meta.url), dirs).catch(() => null);
    fingerprints.set(key, found);
  }
  return found;
}

/** SHA-256 over the `.ts` sources of the rewriter and the WebAssembly runtime under `srcRoot` (`packages/`). */
export function rewriterSourceHash(srcRoot: URL): Promise<string> {
  return sourceHash(srcRoot, REWRITER_DIRS);
}

/** SHA-256 over the `.ts` files (paths and contents) of `dirs` and their subfolders under `srcRoot`. */
export async function sourceHash(srcRoot: URL, dirs: string[]): Promise<string> {
  const parts: string[] = [];
  const walk = async (url: URL, prefix: string) => {
    const entries = [...Deno.readDirSync(url)].sort((a, b) => a.name < b.name ? -1 : 1);
    for (const entry of entries) {
      if (entry.isDirectory) await walk(new URL(`${entry.name}/`, url), `${prefix}${entry.name}/`);
      else if (entry.name.endsWith(".ts")) {
        parts.push(prefix + entry.name, await Deno.readTextFile(new URL(entry.name, url)));
      }
    }
  };
  for (const dir of dirs) await walk(new URL(dir, srcRoot), dir);
  return await sha256Hex(new TextEncoder().encode(parts.join("\0")));
}

/**
 * A `loadPrepared` for `createWasmRuntime` that prepares each plugin once per
 * machine: from `<cacheDir>/prepared/` when an entry fits, else by
 * {@linkcode preparePlugin}, written there for the next process.
 */
export function preparedFromDiskCache(
  cacheDir: string,
  loadBytes: (hook: HookDefinition) => Promise<Uint8Array>,
  identify?: (hook: HookDefinition) => Promise<string | null>,
  options: { shareCode?: boolean } = {},
): (
  hook: HookDefinition,
  limits: EffectiveLimits,
  isolation?: "fresh" | "warm",
) => Promise<LoadedPlugin> {
  // Entries read before, compiled, while their files keep their signatures: a process that
  // discovers its hooks again (the daemon, once per call) neither reads nor compiles them again.
  const kept = new Map<string, { seen: string; loaded: WeakRef<LoadedPlugin> }>();
  const signatureOf = (base: string) => {
    try {
      return `${fileSignature(Deno.statSync(`${base}.wasm`))}|${
        fileSignature(Deno.statSync(`${base}.json`))
      }`;
    } catch {
      return null;
    }
  };
  const keep = (base: string, seen: string | null, loaded: LoadedPlugin) => {
    kept.delete(base);
    if (seen === null) return;
    kept.set(base, { seen, loaded: new WeakRef(loaded) });
    if (kept.size > KEPT_ENTRIES) kept.delete(kept.keys().next().value!);
  };
  const readEntry = async (base: string): Promise<LoadedPlugin | null> => {
    const seen = signatureOf(base);
    if (seen === null) return null;
    const hit = kept.get(base);
    const had = hit?.seen === seen ? hit.loaded.deref() : undefined;
    if (had !== undefined) {
      takePrefetched(base)?.catch(() => {}); // read ahead for nothing: dropped
      keep(base, seen, had);
      return had;
    }
    const loaded = await readEntryFiles(base);
    if (loaded === null) kept.delete(base);
    else keep(base, seen, loaded);
    return loaded;
  };
  return async (hook, limits, runAs) => {
    // The runtime says how the hook runs (a warm hook runs fresh where no warm
    // instance is kept), which decides the instrumentation.
    const isolation = runAs ?? hook.manifest.isolation;
    // Shared for fresh runs only: a warm instance, kept for many calls, keeps a module of its own.
    const shareCode = options.shareCode === true && isolation === "fresh";
    const pin = hook.manifest.sha256;
    const path = hook.entry.runtime === "wasm" ? hook.entry.path : hook.dir;
    const print = await rewriterFingerprint();
    const keyOf = (name: string) =>
      sha256HexOf(
        [FORMAT, print, name, limits.memoryMb, limits.moduleKb, isolation, pin ?? "", shareCode]
          .join(":"),
      );
    const aliasOf = async () => {
      const id = print === null || !identify ? null : await identify(hook).catch(() => null);
      return id === null ? null : `${cacheDir}/prepared/id-${await keyOf(id)}`;
    };
    let alias = await aliasOf();
    if (alias !== null) {
      // Read at once (64 characters in the user's own cache): an async read would add a round
      // trip through Deno's blocking-task threads to each hook of every call.
      let key = "";
      try {
        key = Deno.readTextFileSync(alias);
      } catch { /* not known yet */ }
      const hit = /^[0-9a-f]{64}$/.test(key)
        ? await readEntry(`${cacheDir}/prepared/${key}`)
        : null;
      if (hit) {
        await rememberPrepared(cacheDir, key);
        return hit;
      }
    }
    const bytes = await loadBytes(hook);
    // A first compile has just made the plugin known to the compile caches.
    alias ??= await aliasOf();
    const key = await keyOf(await sha256Hex(bytes));
    const base = `${cacheDir}/prepared/${key}`;
    const remember = () => alias === null ? Promise.resolve() : writeAtomic(alias, key);
    if (print !== null) {
      const hit = await readEntry(base);
      if (hit) {
        await remember().catch(() => {});
        await rememberPrepared(cacheDir, key);
        return hit;
      }
    }
    // A refusal (HookboxError) propagates; the runtime remembers it for this process.
    const { bytes: instrumented, runs, ...meta } = await preparePlugin(bytes, {
      limits,
      isolation,
      sha256: pin,
      path,
      shareCode,
    });
    const loaded: LoadedPlugin = {
      ...meta,
      module: await WebAssembly.compile(instrumented as BufferSource),
      ...(runs ? { image: runsImage(runs) } : {}),
    };
    if (print !== null) {
      const written = await writeEntry(base, instrumented, meta, runs).then(remember).then(
        () => true,
        () => false,
      );
      if (written) keep(base, signatureOf(base), loaded);
      await rememberPrepared(cacheDir, key);
      if (written) await trimCacheAfterWrite(cacheDir);
    }
    return loaded;
  };
}

async function readEntryFiles(base: string): Promise<LoadedPlugin | null> {
  // Read ahead by a one-shot CLI (prepared_prefetch.ts), else (or when that read
  // was refused) now; a module whose bytes fail the corruption check is dropped.
  const early = takePrefetched(base);
  const entry = (early ? await early : null) ?? await readPrepared(base);
  if (entry === null) return null;
  const { verified: _, runsSha256: __, runsVerified: ___, ...meta } = entry.meta;
  return { ...meta, module: entry.module };
}

/**
 * Writes the files through temporary names, the metadata last, so a reader
 * never sees half an entry (the memory image's SHA-256 is in the metadata).
 */
async function writeEntry(
  base: string,
  bytes: Uint8Array,
  meta: object,
  runs: [number, Uint8Array][] | undefined,
): Promise<void> {
  await Deno.mkdir(base.slice(0, base.lastIndexOf("/")), { recursive: true });
  await writeAtomic(`${base}.wasm`, bytes);
  let runsSha256: string | undefined;
  if (runs) {
    const encoded = encodeRuns(runs);
    runsSha256 = await sha256Hex(encoded);
    await writeAtomic(`${base}.runs`, encoded);
  }
  await writeAtomic(`${base}.json`, JSON.stringify(runsSha256 ? { ...meta, runsSha256 } : meta));
}
