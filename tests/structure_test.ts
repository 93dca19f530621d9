/**
 * The folder graph of `src/` only gets better: no new pair of top-level
 * folders importing each other, and no new import of another folder's
 * `_private` file (std's `_tools/check_circular_package_dependencies.ts` is
 * the model; the layer packages of issue 33 will make both lists empty).
 * What is left is listed here by name, so each removal shows in review.
 */
import assert from "node:assert/strict";
import { ROOT } from "./_helpers.ts";

const SRC = `${ROOT}/src`;

/** Folder pairs that still import each other ("." is `src/` itself: errors, policy, bytes …). */
const KNOWN_CYCLES = new Set([
  ". <-> adapters",
  ". <-> agent",
  ". <-> cli",
  ". <-> dispatch",
  ". <-> edge",
  ". <-> hook",
  ". <-> runtime",
  ". <-> schema",
  ". <-> server",
  "adapters <-> compile",
  "adapters <-> runtime",
  "dispatch <-> runtime",
]);

/** Private files still imported from another folder. */
const KNOWN_PRIVATE = new Set([
  "adapters/deno/_plugin_check_worker.ts -> runtime/wasm/_cache.ts",
  "adapters/deno/_plugin_check_worker.ts -> runtime/wasm/_loader.ts",
  "adapters/deno/hook_builder.ts -> compile/_js_toolchain_deno.ts",
  "adapters/deno/hook_builder.ts -> schema/_issues.ts",
  "cli.ts -> cli/_io.ts",
  "cli.ts -> schema/_re2.ts",
  "cli.ts -> schema/_zod.ts",
  "cli/_fail_closed.ts -> schema/_re2.ts",
  "compile/_js_hints.ts -> wasm/_hints.ts",
  "compile/_js_hints.ts -> wasm/_module.ts",
  "compile/_js_hints.ts -> wasm/_reader.ts",
  "compile/_js_hints.ts -> wasm/_writer.ts",
  "dispatch/call_hook.ts -> schema/_zod.ts",
  "dispatch/dispatch.ts -> schema/_re2.ts",
  "hook/discover.ts -> schema/_re2.ts",
  "hook/discover.ts -> schema/_zod.ts",
  "hook/frontmatter.ts -> schema/_issues.ts",
]);

const IMPORT =
  /(?:import|export)[^"';]*?from\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;
const dirOf = (path: string) => path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ".";
const top = (dir: string) => dir.split("/")[0]!;

async function graph() {
  const folders = new Map<string, Set<string>>();
  const privateImports = new Set<string>();
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (path.endsWith(".ts")) {
        const from = path.slice(SRC.length + 1);
        for (const m of (await Deno.readTextFile(path)).matchAll(IMPORT)) {
          const target = new URL(m[1] ?? m[2]!, `file://${path}`).pathname;
          if (!target.startsWith(`${SRC}/`)) continue;
          const to = target.slice(SRC.length + 1);
          if (dirOf(to) === dirOf(from)) continue;
          if (top(dirOf(from)) !== top(dirOf(to))) {
            if (!folders.has(top(dirOf(from)))) folders.set(top(dirOf(from)), new Set());
            folders.get(top(dirOf(from)))!.add(top(dirOf(to)));
          }
          if (to.slice(to.lastIndexOf("/") + 1).startsWith("_")) {
            privateImports.add(`${from} -> ${to}`);
          }
        }
      }
    }
  };
  await walk(SRC);
  const cycles = new Set<string>();
  for (const [a, targets] of folders) {
    for (const b of targets) if (a < b && folders.get(b)?.has(a)) cycles.add(`${a} <-> ${b}`);
  }
  return { cycles, privateImports };
}

Deno.test("src/ gains no folder cycle and no cross-folder import of a private file", async () => {
  const { cycles, privateImports } = await graph();
  assert.deepEqual([...cycles].filter((c) => !KNOWN_CYCLES.has(c)).sort(), [], "new cycles");
  assert.deepEqual(
    [...privateImports].filter((p) => !KNOWN_PRIVATE.has(p)).sort(),
    [],
    "new imports of another folder's _private file",
  );
  // A listed one that is gone must leave the list too, so the lists only shrink.
  assert.deepEqual([...KNOWN_CYCLES].filter((c) => !cycles.has(c)), [], "cycles fixed: unlist");
  assert.deepEqual(
    [...KNOWN_PRIVATE].filter((p) => !privateImports.has(p)),
    [],
    "private imports fixed: unlist",
  );
});
