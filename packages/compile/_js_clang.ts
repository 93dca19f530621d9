/**
 * The clang side of the engine build (Deno-only): flags, per-file object
 * cache (`.cache/engine/obj/<hash>.o`), parallel compilation and the link.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";
import { sha256Hex } from "../core/bytes.ts";
import { isPatched, patchSource } from "./_js_patches.ts";
import { QUICKJS_DIR, REPO_ROOT, runCommand } from "./_js_toolchain.ts";
import { functionNames, hintByName, parseHotList } from "./_js_hints.ts";

/** Where the engine's own sources live. */
export const ENGINE_SRC = `${REPO_ROOT}plugins/engine`;
/** Shadow stack of the engine: deep enough for ~1000 nested JS calls, small to snapshot. */
const STACK_SIZE = 448 * 1024;
export const QUICKJS_FILES = ["quickjs.c", "libregexp.c", "libunicode.c", "cutils.c", "libbf.c"];
export const GLUE_FILES = ["engine.c", "host.c", "interrupt.c", "arena.c"];
/** The functions a hook call runs, listed as compilation hints (see `_js_hints.ts`). */
export const HOT_FUNCTIONS = `${ENGINE_SRC}/hot_functions.txt`;

export const CFLAGS = [
  "--target=wasm32-wasi",
  "--sysroot=/usr",
  "-O2",
  '-DCONFIG_VERSION="2021-03-27"',
  "-DCONFIG_BIGNUM",
  "-DFE_DOWNWARD=0x400",
  "-DFE_UPWARD=0x800",
  `-DHB_STACK_SIZE=${STACK_SIZE}`,
  "-include",
  "malloc.h",
  "-Wno-implicit-const-int-float-conversion",
];
export const LDFLAGS = [
  "--target=wasm32-wasi",
  "--sysroot=/usr",
  "-nostartfiles",
  "-Wl,--no-entry",
  `-Wl,-z,stack-size=${STACK_SIZE}`,
  // A function-style hook's top level runs at build time, outside the runtime's
  // caps: the engine itself never grows past 1 GiB.
  `-Wl,--max-memory=${1024 * 1024 * 1024}`,
  // Debug info goes; function names stay for compilation hints, which
  // `hintByName` turns them into before it drops them (`_js_hints.ts`).
  "-Wl,--strip-debug",
  "-Wl,--gc-sections",
];

async function readText(path: string): Promise<string> {
  return await Deno.readTextFile(path);
}

function cArray(text: string): string {
  const bytes = new TextEncoder().encode(text);
  const rows = [];
  for (let i = 0; i < bytes.length; i += 24) {
    rows.push(Array.from(bytes.subarray(i, i + 24)).join(","));
  }
  return `const char hb_prelude_source[] = {\n${rows.join(",\n")},0};\n` +
    `const unsigned int hb_prelude_length = ${bytes.length};\n`;
}

/** Everything besides a file's own text that changes its object code. */
export async function headerSalt(clangVersion: string): Promise<string> {
  const headers = [
    `${ENGINE_SRC}/engine.h`,
    `${ENGINE_SRC}/include/pthread.h`,
  ];
  const texts = await Promise.all(headers.map(readText));
  const quickjsH = await patchSource(
    QUICKJS_HEADER,
    await readText(`${QUICKJS_DIR}/${QUICKJS_HEADER}`),
  );
  return [clangVersion, CFLAGS.join(" "), ...texts, quickjsH].join("\0");
}

/** QuickJS's public header: patched like the sources (its inline reference counting). */
const QUICKJS_HEADER = "quickjs.h";

async function clang(args: string[], what: string): Promise<void> {
  const out = await runCommand("clang", args);
  if (out.code !== 0) {
    throw new HookboxError(
      "COMPILE_FAILED",
      `clang failed on ${what}:\n${out.stderr.slice(0, 4000)}`,
    );
  }
}

/** Runs `jobs` with at most `limit` in flight. */
async function parallel(jobs: (() => Promise<void>)[], limit: number): Promise<void> {
  const queue = [...jobs];
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) await job();
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
}

/** Compiles one C file, reusing `.cache/engine/obj/<hash>.o` when unchanged. */
async function compileObject(
  source: string,
  salt: string,
  objDir: string,
  patchedDir: string,
): Promise<string> {
  // The patched header is found before the package's (quickjs.c, patched, sits next to it).
  const include = [
    `-I${ENGINE_SRC}/include`,
    `-I${patchedDir}`,
    `-I${QUICKJS_DIR}`,
    `-I${ENGINE_SRC}`,
  ];
  const key = await sha256Hex([salt, source, await readText(source)].join("\0"));
  const object = `${objDir}/${key.slice(0, 24)}.o`;
  try {
    await Deno.stat(object);
    return object;
  } catch { /* compile it */ }
  const tmp = `${object}.${crypto.randomUUID()}.tmp`;
  await clang([...CFLAGS, ...include, "-c", source, "-o", tmp], source);
  await Deno.rename(tmp, object);
  return object;
}

/** Compiles every source (cached per file) and links `dir/engine.wasm`. */
export async function compileAndLink(dir: string, prelude: string, salt: string): Promise<void> {
  await Deno.writeTextFile(`${dir}/prelude.c`, cArray(prelude));
  // Patched QuickJS files go to a fixed place, so their object cache key (path + text) is stable.
  const patchedDir = `${dir}/../patched`;
  await Deno.mkdir(patchedDir, { recursive: true });
  const quickjs = await Promise.all(QUICKJS_FILES.map(async (f) => {
    if (!isPatched(f)) return `${QUICKJS_DIR}/${f}`;
    const text = await patchSource(f, await readText(`${QUICKJS_DIR}/${f}`));
    await Deno.writeTextFile(`${patchedDir}/${f}`, text);
    return `${patchedDir}/${f}`;
  }));
  await Deno.writeTextFile(
    `${patchedDir}/${QUICKJS_HEADER}`,
    await patchSource(QUICKJS_HEADER, await readText(`${QUICKJS_DIR}/${QUICKJS_HEADER}`)),
  );
  const sources = [
    ...quickjs,
    ...GLUE_FILES.map((f) => `${ENGINE_SRC}/${f}`),
    `${dir}/prelude.c`,
  ];
  const objDir = `${dir}/../obj`;
  await Deno.mkdir(objDir, { recursive: true });
  const objects: string[] = [];
  await parallel(
    sources.map((s, i) => async () => {
      objects[i] = await compileObject(s, salt, objDir, patchedDir);
    }),
    navigator.hardwareConcurrency || 2,
  );
  await clang([...LDFLAGS, ...objects, "-o", `${dir}/linked.wasm`], "the engine link");
  const linked = await Deno.readFile(`${dir}/linked.wasm`);
  const { bytes } = hintByName(linked, parseHotList(await readText(HOT_FUNCTIONS)));
  // Kept for `scripts/engine_hot.ts`, which names the functions a call compiles.
  await Deno.writeTextFile(`${dir}/names.json`, JSON.stringify([...functionNames(linked)]));
  await Deno.remove(`${dir}/linked.wasm`);
  await Deno.writeFile(`${dir}/engine.wasm`, bytes);
}
