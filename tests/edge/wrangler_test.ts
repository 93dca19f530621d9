/**
 * The bundle's `wrangler.toml` as Cloudflare's own tool reads it: the real
 * wrangler (npm, pinned) runs `deploy --dry-run` in the bundle's folder and
 * must take every module the Worker imports, each as the kind it is.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { writeBundle } from "../../packages/deno/bundle.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { harness, wasmFolder } from "../service/_api.ts";
import { tempDir } from "../_helpers.ts";
import { wranglerBinary } from "../_wrangler.ts";

Deno.test("wrangler deploy --dry-run takes the bundle: its code, chunks, plugins and data", async () => {
  const dir = await tempDir("hookbox-wrangler-");
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  const key = await h.tenant("acme");
  const up = await h.call("PUT", "/v1/hooks/guard", {
    key,
    body: await wasmFolder("guard", "guard_wasi"),
  });
  assertEquals(up.status, 201, JSON.stringify(up.body));
  await writeBundle({ store: h.store, out: `${dir}/out` });
  await h.close();
  await Deno.mkdir(`${dir}/home`);
  const run = await new Deno.Command(await wranglerBinary(), {
    args: ["deploy", "--dry-run", "--outdir", `${dir}/dry`],
    cwd: `${dir}/out`,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: `${dir}/home`,
      WRANGLER_SEND_METRICS: "false",
      NO_COLOR: "1",
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const said = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
  assertEquals(run.code, 0, said);
  // Every module of the bundle is attached, as the kind the Worker imports it as.
  const kinds = new Map(
    [...said.matchAll(/│\s*(\S+)\s*│\s*(esm|compiled-wasm|buffer|commonjs|text)\s*│/g)]
      .map((m) => [m[1]!, m[2]!]),
  );
  const chunks = [...Deno.readDirSync(`${dir}/out/chunks`)].map((e) => `chunks/${e.name}`);
  const plugins = [...Deno.readDirSync(`${dir}/out/plugins`)].map((e) => `plugins/${e.name}`);
  ok(chunks.length >= 2 && plugins.length === 3, `${chunks} ${plugins}`);
  const expected = new Map([
    ...chunks.map((c) => [c, "esm"] as const),
    ...plugins.map((p) => [p, "compiled-wasm"] as const),
    ["images.bin", "buffer"],
    ["registry.bin", "buffer"],
  ]);
  assertEquals(new Map([...kinds].sort()), new Map([...expected].sort()), said);
  for (const file of ["worker.js", ...chunks, ...plugins, "images.bin", "registry.bin"]) {
    await Deno.stat(`${dir}/dry/${file}`);
  }
});
