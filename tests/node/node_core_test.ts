/**
 * The Web-API core on a real Node (the machine's `node`, 20+): bundled with
 * esbuild for a neutral platform (the ES module builds of our dependencies),
 * it gives the same answers as on Deno — including warm write-tracked
 * instances, which fall back to whole-memory restore where V8 has no
 * multi-memory (Node 20).
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import * as esbuild from "esbuild";
import { corpus } from "../runtime/wasm/_corpus.ts";

Deno.test("the core's wasm runtime runs on Node with the answers it gives on Deno", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-node-" });
  for (const name of ["guard_wasi", "loop_forever", "warm_reset_probe"]) {
    await Deno.writeFile(`${dir}/${name}.wasm`, await corpus(name));
  }
  try {
    await esbuild.build({
      entryPoints: [new URL("./_core_entry.ts", import.meta.url).pathname],
      outfile: `${dir}/core.mjs`,
      bundle: true,
      format: "esm",
      platform: "neutral",
      mainFields: ["module", "main"],
      external: ["node:*"],
      logLevel: "silent",
    });
  } finally {
    await esbuild.stop();
  }
  const out = await new Deno.Command("node", { args: [`${dir}/core.mjs`, dir] }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 0, stderr);
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n").map((l) => JSON.parse(l));
  const probe = { name: "warm-reset-probe", exitCode: 0, stdout: "ok", stderr: "", code: null };
  assertEquals(lines, [
    { name: "guard-wasi", exitCode: 2, stdout: "", stderr: "rm -rf is not allowed", code: null },
    { name: "guard-wasi", exitCode: 0, stdout: "", stderr: "", code: null },
    { name: "loop-forever", exitCode: null, stdout: "", stderr: "", code: "LIMIT_FUEL" },
    probe,
    probe,
    probe,
    probe,
  ]);
  await Deno.remove(dir, { recursive: true });
});
