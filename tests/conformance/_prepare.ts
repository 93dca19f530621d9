/**
 * Builds the conformance cases on Deno (where the compilers are): each hook
 * becomes a folder `<root>/<case>/.agents/hooks/<hook>/` with its HOOK.md and
 * its `plugin.wasm` (corpus `.wat` assembled, JS/TS/AssemblyScript compiled
 * as `hookbox compile` does). The same folders feed the library runs and are
 * uploaded to the store the workerd bundle is made from.
 *
 * @module
 */
import { denoFs } from "../../packages/host-deno/fs.ts";
import { compileHook } from "../../packages/compile/mod.ts";
import { loadHook } from "../../packages/core/hook/discover.ts";
import { hookMd, ROOT } from "../_helpers.ts";
import { corpus } from "../runtime-wasm/_corpus.ts";
import type { Case, HookSpec } from "./cases.ts";

/** Where the compiled plugins are cached between runs. */
const CACHE = `${ROOT}/.cache/conformance`;

/** Writes every case's hook folders under `root` and the cases as `<root>/cases.json`. */
export async function prepareCases(root: string, cases: Case[]): Promise<void> {
  for (const c of cases) {
    for (const spec of c.hooks) {
      const dir = hookDir(root, c.name, spec.name);
      await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(`${dir}/HOOK.md`, hookMd({ name: spec.name, ...spec.manifest }));
      await Deno.writeFile(`${dir}/plugin.wasm`, await pluginOf(spec, `${root}/.src/${c.name}`));
    }
  }
  await Deno.writeTextFile(`${root}/cases.json`, JSON.stringify(cases));
}

/** The folder of hook `hook` of case `name`. */
export function hookDir(root: string, name: string, hook: string): string {
  return `${root}/${name}/.agents/hooks/${hook}`;
}

async function pluginOf(spec: HookSpec, scratch: string): Promise<Uint8Array> {
  const { source } = spec;
  if ("wat" in source) return await corpus(source.wat);
  let folder: string;
  if ("folder" in source) {
    folder = `${ROOT}/${source.folder}`;
  } else {
    folder = `${scratch}/${spec.name}`;
    const file = "js" in source ? "run.js" : `run${source.file.slice(source.file.indexOf("."))}`;
    await Deno.mkdir(`${folder}/scripts`, { recursive: true });
    await Deno.writeTextFile(`${folder}/HOOK.md`, hookMd({ name: spec.name }));
    await Deno.writeTextFile(
      `${folder}/scripts/${file}`,
      "js" in source ? source.js : await Deno.readTextFile(`${ROOT}/${source.file}`),
    );
  }
  const hook = await loadHook(denoFs, folder, "project");
  return (await compileHook(hook, { cacheDir: CACHE })).bytes;
}
