/**
 * The plugins a runtime keeps loaded are bounded in bytes
 * (`keptPluginBytes`): compiled, a plugin holds several times its bytes, and
 * a host keeps every hook it serves, so a repository's or a tenant's
 * thousand big plugins held gigabytes (a 4 MiB plugin ~11 MB, ~3 MB per 1.4
 * MB plugin here). Past the cap the least recently called are let go and
 * loaded again when called.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { createWasmRuntime, preparePlugin } from "../../packages/runtime-wasm/mod.ts";
import type { LoadedPlugin } from "../../packages/runtime-wasm/_loader.ts";
import { bigPlugin } from "./_kept_plugins_probe.ts";
import { request, wasmHook } from "./_corpus.ts";
import { fakeHook } from "../_helpers.ts";
import type { HookDefinition } from "../../packages/core/hook/types.ts";

const PROBE = new URL("./_kept_plugins_probe.ts", import.meta.url).pathname;

Deno.test("a runtime keeps plugins up to its byte cap, and a plugin let go loads again", async () => {
  const size = bigPlugin(50, 0).byteLength;
  const cap = Math.floor(size * 2.5);
  const runtime = createWasmRuntime({
    loadBytes: (hook) => Promise.resolve(bigPlugin(50, Number(hook.name.slice(4)))),
    keptPluginBytes: cap,
  });
  try {
    const hooks = Array.from({ length: 6 }, (_, i) => wasmHook(`big-${i}`));
    // Every hook in turn, twice: the first ones were let go and load again.
    for (const hook of [...hooks, ...hooks]) {
      const result = await runtime.run(request(hook));
      assertEquals([result.exitCode, result.failure], [0, undefined], hook.name);
      const { keptPlugins, keptPluginBytes } = runtime.stats!();
      ok(keptPluginBytes! <= cap, `${keptPluginBytes} bytes kept, cap ${cap}`);
      ok(keptPlugins! >= 1 && keptPlugins! <= 2, `${keptPlugins} kept`);
    }
  } finally {
    await runtime.close?.();
  }
});

/** A runtime keeping `plugins` of the plugins `bigPlugin(50, n)` of hooks `big-n`, counting reads by hook. */
function countingRuntime(plugins: number) {
  const size = bigPlugin(50, 0).byteLength;
  const reads = new Map<string, number>();
  const runtime = createWasmRuntime({
    loadBytes: (hook) => {
      reads.set(hook.name, (reads.get(hook.name) ?? 0) + 1);
      return Promise.resolve(bigPlugin(50, Number(hook.name.slice(4))));
    },
    keptPluginBytes: size * plugins,
  });
  return { runtime, reads, size };
}

Deno.test("one tenant's many plugins let go of its own, never another tenant's", async () => {
  // Source of the attack: a tenant cycling through more big plugins than the cap let go of every
  // other tenant's, each then read and instrumented again on its tenant's next event.
  const { runtime, reads, size } = countingRuntime(4);
  try {
    // The hooks are kept, as a host keeps the hooks it serves.
    const hooks = new Map(Array.from({ length: 9 }, (_, i) => [`big-${i}`, wasmHook(`big-${i}`)]));
    const call = async (name: string, tenantId: string) => {
      const result = await runtime.run({ ...request(hooks.get(name)!), tenantId });
      assertEquals([result.exitCode, result.failure], [0, undefined], `${tenantId} ${name}`);
    };
    await call("big-0", "quiet");
    for (let round = 0; round < 3; round++) {
      for (let i = 1; i <= 8; i++) await call(`big-${i}`, "noisy");
      await call("big-0", "quiet");
    }
    // The quiet tenant's plugin was read once; the noisy one's were let go and read again.
    assertEquals(reads.get("big-0"), 1);
    assertEquals(reads.get("big-1"), 3);
    ok(runtime.stats!().keptPluginBytes! <= size * 4);
  } finally {
    await runtime.close?.();
  }
});

Deno.test("in one tenant, a repository's many plugins let go of their own, not the user's or another repository's", async () => {
  // Source: the user's daemon serves every repository as one tenant ("default"): a repository's
  // big plugins let go of the user's hooks and other repositories', read again on their next call.
  const { runtime, reads } = countingRuntime(5);
  /** A hook `name` of `level` in the hooks folder `folder`. */
  const hook = (name: string, level: "user" | "project", folder: string): HookDefinition => ({
    ...fakeHook({ name }, {
      level,
      entry: { runtime: "wasm", format: "wasm", path: `${folder}/${name}/plugin.wasm` },
    }),
    dir: `${folder}/${name}`,
  });
  try {
    const user = hook("big-0", "user", "/home/u/.config/agents/hooks");
    const other = hook("big-1", "project", "/src/b/.agents/hooks");
    const noisy = Array.from(
      { length: 8 },
      (_, i) => hook(`big-${i + 2}`, "project", "/src/a/.agents/hooks"),
    );
    const call = async (h: HookDefinition) => {
      const result = await runtime.run({ ...request(h), tenantId: "default" });
      assertEquals([result.exitCode, result.failure], [0, undefined], h.dir);
    };
    for (let round = 0; round < 3; round++) {
      await call(user);
      await call(other);
      for (const h of noisy) await call(h);
    }
    assertEquals(reads.get(user.name), 1, "the user's hook read once");
    assertEquals(reads.get(other.name), 1, "the other repository's read once");
    assertEquals(reads.get(noisy[0]!.name), 3, "the noisy repository's read again");
  } finally {
    await runtime.close?.();
  }
});

Deno.test("what a runtime holds stops growing at its cap, however many big plugins it loads", async () => {
  // 36 plugins of ~1.4 MB, every hook kept alive as a host keeps them: the compiled modules still
  // alive after collections are those of the plugins kept (and the runtime's helper modules).
  // Resident memory, which this test once compared, moves by tens of MB on a loaded machine.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--v8-flags=--expose-gc", PROBE, "36", "5000", "6000000"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  const { live, compiled, stats } = JSON.parse(text);
  ok(stats.keptPluginBytes <= 6_000_000, text);
  ok(compiled >= 36, text);
  // The cap holds three of these plugins, and the runtime compiles a helper module or two; without
  // the cap every plugin's module stays alive with its hook (37 alive).
  ok(live <= 6, `${live} modules alive: ${text}`);
});

Deno.test("keptPluginBytes and loadedPluginBytes must be non-negative integers", () => {
  const loadBytes = () => Promise.resolve(new Uint8Array());
  for (const option of ["keptPluginBytes", "loadedPluginBytes"]) {
    for (const bad of [-1, 1.5, Number.NaN, "8" as unknown as number]) {
      let message = "";
      try {
        createWasmRuntime({ loadBytes, [option]: bad });
      } catch (err) {
        message = (err as Error).message;
      }
      assertEquals(
        message,
        `createWasmRuntime: options.${option} must be a non-negative integer`,
      );
    }
  }
});

Deno.test("past loadedPluginBytes no plugin is loaded: the call is a limit, the loaded ones still run", async () => {
  // A one-shot process's cap: plugins let go are not collected before it ends, so what it may
  // load in its life is bounded, re-loads of plugins let go included.
  const size = bigPlugin(50, 0).byteLength;
  let reads = 0;
  const runtime = createWasmRuntime({
    loadBytes: (hook) => (reads++, Promise.resolve(bigPlugin(50, Number(hook.name.slice(4))))),
    keptPluginBytes: size * 2,
    loadedPluginBytes: Math.floor(size * 2.5),
  });
  try {
    const outcome = async (name: string) => {
      const result = await runtime.run(request(wasmHook(name)));
      return result.failure?.code ?? `exit ${result.exitCode}`;
    };
    const hooks = ["big-0", "big-1", "big-2"].map((name) => wasmHook(name));
    const run = (i: number) => runtime.run(request(hooks[i]!));
    // Three loads reach the cap (the third starts below it).
    for (const i of [0, 1, 2]) assertEquals((await run(i)).exitCode, 0);
    assertEquals(reads, 3);
    ok(runtime.stats!().loadedPluginBytes! >= size * 2.5);
    // The fourth plugin is refused without being read; so is big-0, let go by the kept cap.
    const refused = await run(0);
    assertEquals(refused.failure?.code, "LIMIT_MODULE");
    match(
      refused.failure?.message ?? "",
      /this process has loaded \d+ MiB of plugins, its cap is \d+ MiB \(loadedPluginBytes\): no more are loaded in it/,
    );
    assertEquals(await outcome("big-3"), "LIMIT_MODULE");
    assertEquals(reads, 3);
    // The plugins still kept answer as before.
    assertEquals((await run(2)).exitCode, 0);
  } finally {
    await runtime.close?.();
  }
});

Deno.test("a plugin let go during its call leaves no memory in the pool to hold it", async () => {
  // Prepared ahead (as an edge bundle's are), so that loading the others settles while the first
  // call still waits for its instance: two loads past a one-plugin cap let it go mid-call.
  const plugins: Record<string, LoadedPlugin> = {};
  for (const [i, name] of ["big-0", "big-1", "big-2"].entries()) {
    const { bytes, runs: _, ...meta } = await preparePlugin(bigPlugin(50, i), {
      limits: { memoryMb: 16, moduleKb: 1024 },
      isolation: "fresh",
    });
    plugins[name] = { ...meta, module: await WebAssembly.compile(bytes as BufferSource) };
  }
  ok(plugins["big-0"]!.memoryImport, "a fresh plugin imports its memory (it is pooled)");
  const runtime = createWasmRuntime({
    loadBytes: () => Promise.reject(new Error("prepared ahead")),
    loadPrepared: (hook) => Promise.resolve(plugins[hook.name]!),
    keptPluginBytes: plugins["big-0"]!.byteLength!,
  });
  try {
    const [first, second, third] = [0, 1, 2].map((i) => wasmHook(`big-${i}`));
    assertEquals((await runtime.run(request(first!))).exitCode, 0);
    const results = await Promise.all([first, second, third].map((h) => runtime.run(request(h!))));
    assertEquals(results.map((r) => r.exitCode), [0, 0, 0]);
    const { keptPlugins, pooledMemoryBytes } = runtime.stats!();
    // The one plugin kept has its memory pooled; those let go have none held for them.
    assertEquals([keptPlugins, pooledMemoryBytes], [1, 64 * 1024]);
  } finally {
    await runtime.close?.();
  }
});
