/** `hookbox compile HOOK_DIR... [--out DIR]`: builds each hook's plugin. */
import { parseArgs } from "node:util";
import { parseOptions, usageLine } from "./commands.ts";
import { absolute, denoFs } from "../host-deno/fs.ts";
import { compileHook, defaultCacheDir } from "../compile/mod.ts";
import { HookboxError } from "../core/errors.ts";
import { loadHook } from "../core/hook/discover.ts";
import { loadPlugin } from "../runtime-wasm/mod.ts";
import { EXIT, UsageError } from "./_io.ts";

/** Runs the command; returns the exit code. */
export async function compileCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("compile"),
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length === 0) {
    throw new UsageError(`nothing to compile; usage: ${usageLine("compile")}`);
  }
  const out = absolute(values.out);
  await Deno.mkdir(out, { recursive: true });
  const cacheDir = values["cache-dir"] ?? defaultCacheDir();
  for (const dir of positionals.map(absolute)) {
    if ((await denoFs.stat(dir))?.kind !== "dir") {
      throw new HookboxError("HOOK_DIR_UNREADABLE", "no such folder", { path: dir });
    }
    const hook = await loadHook(denoFs, dir, "project");
    if (hook.entry.runtime !== "wasm") {
      throw new HookboxError(
        "COMPILE_FAILED",
        `hook "${hook.name}" has a ${hook.entry.runtime} entry, nothing to compile`,
        { path: dir },
      );
    }
    // A first compile can take seconds (a minute with the engine build): say so, to a person.
    if (Deno.stderr.isTerminal()) console.error(`hookbox: compiling ${hook.name} …`);
    const plugin = await compileHook(hook, { cacheDir });
    await loadPlugin(plugin.bytes, {
      memoryMb: hook.manifest.limits.memory_mb,
      path: hook.entry.path,
      ...(hook.manifest.sha256 ? { sha256: hook.manifest.sha256 } : {}),
    });
    const file = `${out}/${hook.name}.wasm`;
    await Deno.writeFile(file, plugin.bytes);
    console.log(
      `${hook.name} sha256:${plugin.sha256} ${plugin.bytes.byteLength} bytes ${file}${
        plugin.cached ? " (cached)" : ""
      }`,
    );
  }
  return EXIT.allow;
}
