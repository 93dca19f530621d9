/**
 * The package layout: `packages/hookbox/mod.ts` (the `"."` export) is the Web-API core.
 * It type-checks with no Deno types (only the ES and DOM libraries), and no
 * module it reaches uses `Deno.*` or imports `node:*` — those live in the
 * adapters (`./deno`, `./node`). Every export passes `deno doc --lint`.
 */
import { VERSION } from "../packages/core/version.ts";
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { ROOT } from "./_helpers.ts";

const run = (args: string[]) =>
  new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "piped", stderr: "piped" })
    .output();

Deno.test("the core type-checks with no Deno types", async () => {
  const out = await run(["check", "--config", "tests/core.deno.json", "packages/hookbox/mod.ts"]);
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
});

/** The code of a module without its comments (a rough cut, enough for this check). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

Deno.test("no module the core reaches uses Deno.* or imports node:*", async () => {
  const out = await run(["info", "--json", "packages/hookbox/mod.ts"]);
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string; dependencies?: { specifier: string }[] }[];
  };
  const local = graph.modules.filter((m) => m.specifier.startsWith(`file://${ROOT}/packages/`));
  ok(local.length > 50, `${local.length} modules`);
  const offences: string[] = [];
  for (const module of local) {
    const path = new URL(module.specifier).pathname;
    const text = code(await Deno.readTextFile(path));
    if (/\bDeno\./.test(text)) offences.push(`${path}: Deno.`);
    for (const dep of module.dependencies ?? []) {
      if (dep.specifier.startsWith("node:")) offences.push(`${path}: ${dep.specifier}`);
    }
    ok(
      !/\/packages\/(deno|host-deno|compile|cli)\//.test(path),
      `${path}: the core reaches Deno-bound code`,
    );
  }
  assertEquals(offences, []);
});

const PACKAGE = `${ROOT}/packages/hookbox`;

Deno.test("@hookbox/hookbox exports the core as '.', the Deno and Node adapters, the rewriter as './wasm'", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${PACKAGE}/deno.json`));
  assertEquals(config.name, "@hookbox/hookbox");
  assertEquals(config.version, VERSION, "packages/core/version.ts says the same version");
  assertEquals(config.exports, {
    ".": "./mod.ts",
    "./deno": "./deno.ts",
    "./node": "./node.ts",
    "./wasm": "./wasm.ts",
  });
});

Deno.test("deno doc --lint is clean on every export: the public API names every type it uses", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${PACKAGE}/deno.json`));
  const entries = Object.values(config.exports as Record<string, string>)
    .map((file) => `${PACKAGE}/${file}`);
  assertEquals(entries.length, 4);
  const out = await run(["doc", "--lint", ...entries]);
  const said = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  assertEquals(out.code, 0, said.slice(0, 4000));
});
