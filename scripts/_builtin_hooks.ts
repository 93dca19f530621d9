/**
 * The built-in hooks of `hooks/` as upload bodies for the §6 API: each one
 * compiled locally (cached) and sent as its plugin, like an operator would.
 *
 * @module
 */
import { compileHook } from "../packages/compile/mod.ts";
import { loadHook } from "../packages/core/hook/discover.ts";
import { denoFs } from "../packages/host-deno/fs.ts";

/** Name and `files` body of every built-in hook. */
export async function builtinHookUploads(): Promise<
  { name: string; files: Record<string, unknown> }[]
> {
  const root = new URL("../hooks/", import.meta.url).pathname;
  const uploads = [];
  for await (const entry of Deno.readDir(root)) {
    if (!entry.isDirectory) continue;
    const hook = await loadHook(denoFs, `${root}${entry.name}`, "platform");
    const files: Record<string, unknown> = {
      "HOOK.md": await Deno.readTextFile(`${root}${entry.name}/HOOK.md`),
    };
    if (hook.entry.runtime === "wasm") {
      const { bytes } = await compileHook(hook);
      let text = "";
      for (let i = 0; i < bytes.length; i += 0x8000) {
        text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      }
      files["plugin.wasm"] = { base64: btoa(text) };
    }
    uploads.push({ name: hook.name, files });
  }
  return uploads;
}
