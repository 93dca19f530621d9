/**
 * What a JS/TS hook's bundle reads at compile time is bounded: a file esbuild
 * would block on (a FIFO: the read never returns) or read without end, a file
 * over the source cap, too many files, too many bytes together — each is a
 * `COMPILE_FAILED` naming the cause, in bounded time. Hostile repositories
 * are made here (git cannot carry a FIFO; the big files are sparse).
 */
import assert from "node:assert/strict";
import { compileJsHook } from "../../packages/compile/js.ts";
import {
  MAX_BUNDLE_BYTES,
  MAX_BUNDLE_FILES,
  MAX_NESTING,
  MAX_PATH_CHARS,
} from "../../packages/compile/_js_bundle.ts";
import { isHookboxError } from "../../packages/core/errors.ts";
import { MAX_SOURCE_BYTES } from "../../packages/core/hook/files.ts";
import { tempDir } from "../_helpers.ts";

/** A hook folder `<tmp>/hook/scripts/` with `run.js`; removed after `fn`. */
async function withHook(run: string, fn: (scripts: string, cache: string) => Promise<void>) {
  const dir = await tempDir("hookbox-js-inputs-");
  try {
    await Deno.mkdir(`${dir}/hook/scripts`, { recursive: true });
    await Deno.writeTextFile(`${dir}/hook/scripts/run.js`, run);
    await fn(`${dir}/hook/scripts`, `${dir}/cache`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function mkfifo(path: string): Promise<void> {
  const { success } = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(success, `mkfifo ${path}`);
}

/** Fails the test instead of hanging it when `work` never settles. */
function bounded<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} hung`)), 60_000);
  });
  return Promise.race([work, hung]).finally(() => clearTimeout(timer));
}

async function refused(entry: string, cache: string, message: RegExp): Promise<void> {
  await assert.rejects(bounded(compileJsHook(entry, { cacheDir: cache }), "compile"), (err) => {
    assert.ok(isHookboxError(err, "COMPILE_FAILED"), String(err));
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("compileJsHook() refuses to import a FIFO instead of blocking on it", async () => {
  await withHook('import data from "./data.txt";\nconsole.log(data);\n', async (scripts, cache) => {
    await mkfifo(`${scripts}/data.txt`);
    await refused(`${scripts}/run.js`, cache, /data\.txt is not a regular file/);
  });
});

Deno.test("compileJsHook() does not block when a file of an earlier build became a FIFO", async () => {
  await withHook('import data from "./data.txt";\nconsole.log(data);\n', async (scripts, cache) => {
    await Deno.writeTextFile(`${scripts}/data.txt`, "hello");
    await compileJsHook(`${scripts}/run.js`, { cacheDir: cache });
    await Deno.remove(`${scripts}/data.txt`);
    await mkfifo(`${scripts}/data.txt`);
    await refused(`${scripts}/run.js`, cache, /data\.txt is not a regular file/);
  });
});

Deno.test("compileJsHook() refuses an import longer than any path before resolving it", async () => {
  // Each folder of such a path is looked at: 200 KB of `a/` took 1.8 GB as a relative
  // import, and kept esbuild busy to the deadline as a bare or absolute one.
  for (const spec of ["./", "", "/", "@"].map((p) => `${p}${"a/".repeat(100_000)}x.js`)) {
    await withHook(
      `import x from ${JSON.stringify(spec)};\nconsole.log(x);\n`,
      (scripts, cache) =>
        refused(
          `${scripts}/run.js`,
          cache,
          new RegExp(
            `is ${spec.length} characters long, over the ${MAX_PATH_CHARS} a path can have`,
          ),
        ),
    );
  }
});

Deno.test("compileJsHook() refuses brackets nested deeper than the bundler takes", async () => {
  // esbuild's parser recurses: 2 MB of `[` ended its process at its stack's limit (a
  // gigabyte, and a 30 KB crash report on the caller's stderr).
  const depth = 1_000_000;
  await withHook(
    `export default ${"[".repeat(depth)}${"]".repeat(depth)};\n`,
    (scripts, cache) =>
      refused(
        `${scripts}/run.js`,
        cache,
        new RegExp(`nests brackets ${depth} deep, over the ${MAX_NESTING}`),
      ),
  );
  // A deep but ordinary nesting still builds (the engine's own parser takes fewer levels
  // than the cap, and says so in its own words).
  const deep = 100;
  await withHook(
    `console.log(${"[".repeat(deep)}${"]".repeat(deep)}.length);\n`,
    async (scripts, cache) => {
      await compileJsHook(`${scripts}/run.js`, { cacheDir: cache });
    },
  );
});

Deno.test("compileJsHook() refuses an imported file over the source cap before reading it", async () => {
  await withHook('import "./big.js";\n', async (scripts, cache) => {
    await Deno.writeTextFile(`${scripts}/big.js`, "");
    await Deno.truncate(`${scripts}/big.js`, MAX_SOURCE_BYTES + 1);
    await refused(
      `${scripts}/run.js`,
      cache,
      new RegExp(`big\\.js is ${MAX_SOURCE_BYTES + 1} bytes`),
    );
  });
});

Deno.test("compileJsHook() refuses more files, or more bytes together, than one bundle reads", async () => {
  const many = Array.from({ length: MAX_BUNDLE_FILES }, (_, i) => `import "./m${i}.js";`);
  await withHook(`${many.join("\n")}\n`, async (scripts, cache) => {
    for (let i = 0; i < MAX_BUNDLE_FILES; i++) await Deno.writeTextFile(`${scripts}/m${i}.js`, "");
    await refused(`${scripts}/run.js`, cache, new RegExp(`more than ${MAX_BUNDLE_FILES} files`));
  });
  const parts = Math.ceil(MAX_BUNDLE_BYTES / MAX_SOURCE_BYTES) + 1;
  const big = Array.from({ length: parts }, (_, i) => `import "./b${i}.js";`);
  await withHook(`${big.join("\n")}\n`, async (scripts, cache) => {
    for (let i = 0; i < parts; i++) {
      await Deno.writeTextFile(`${scripts}/b${i}.js`, "");
      await Deno.truncate(`${scripts}/b${i}.js`, MAX_SOURCE_BYTES);
    }
    await refused(
      `${scripts}/run.js`,
      cache,
      new RegExp(`over ${MAX_BUNDLE_BYTES} bytes together`),
    );
  });
});

Deno.test("compileJsHook() reads no tsconfig.json: a FIFO one above the hook folder changes nothing", async () => {
  await withHook("const n: number = 1;\nconsole.log(n);\n", async (scripts, cache) => {
    await Deno.rename(`${scripts}/run.js`, `${scripts}/run.ts`);
    await mkfifo(`${scripts}/../../tsconfig.json`);
    const built = await bounded(compileJsHook(`${scripts}/run.ts`, { cacheDir: cache }), "compile");
    assert.ok(built.bytes.byteLength > 0);
  });
});

Deno.test("compileJsHook() refuses a package.json that is a FIFO above the hook or its imports, and stops a bundling that blocks in a package", async () => {
  await withHook('import "./data.js";\n', async (scripts, cache) => {
    await Deno.writeTextFile(`${scripts}/data.js`, "");
    await mkfifo(`${scripts}/../../package.json`);
    await refused(`${scripts}/run.js`, cache, /package\.json is not a regular file/);
  });
  await withHook('import "./lib/data.js";\n', async (scripts, cache) => {
    // Inside the hook: found as the import is resolved, before esbuild reads it.
    await Deno.mkdir(`${scripts}/lib`);
    await Deno.writeTextFile(`${scripts}/lib/data.js`, "");
    await mkfifo(`${scripts}/lib/package.json`);
    await refused(`${scripts}/run.js`, cache, /lib\/package\.json is not a regular file/);
  });
  await withHook('import "pkg";\n', async (scripts, cache) => {
    // A package esbuild looks up by itself: only the deadline ends the read.
    await Deno.mkdir(`${scripts}/node_modules/pkg`, { recursive: true });
    await Deno.writeTextFile(`${scripts}/node_modules/pkg/index.js`, "");
    await mkfifo(`${scripts}/node_modules/pkg/package.json`);
    await assert.rejects(
      bounded(
        compileJsHook(`${scripts}/run.js`, { cacheDir: cache, bundleTimeoutMs: 2000 }),
        "compile",
      ),
      (err) => {
        assert.ok(isHookboxError(err, "COMPILE_FAILED"), String(err));
        assert.match(err.message, /did not finish within 2000 ms/);
        return true;
      },
    );
  });
});

Deno.test("compileJsHook() does not read whole a file of an earlier build that grew past the cap", async () => {
  await withHook('import data from "./data.txt";\nconsole.log(data);\n', async (scripts, cache) => {
    await Deno.writeTextFile(`${scripts}/data.txt`, "hello");
    await compileJsHook(`${scripts}/run.js`, { cacheDir: cache });
    // Sparse: 4 GiB of zeros the check of the earlier build's inputs would read and hash whole.
    await Deno.truncate(`${scripts}/data.txt`, 4 * 1024 ** 3);
    const before = Deno.memoryUsage().rss;
    await refused(`${scripts}/run.js`, cache, /data\.txt is \d+ bytes, over the \d+-byte cap/);
    const grew = Deno.memoryUsage().rss - before;
    assert.ok(grew < 1024 ** 3, `the check took ${(grew / 1024 ** 2).toFixed(0)} MiB`);
  });
});
