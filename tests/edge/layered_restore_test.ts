/**
 * In a bundle, plugins that share a module and start as exactly their image
 * restore their warm instances from the module's shared base and their own
 * runs over it (`Snapshot` layers), never from a copy of their own, and take
 * memories another tenant's instance gave back without their being zeroed
 * first (the image overwrites every byte): every call of every tenant still
 * starts from that tenant's own pristine memory, whatever the call before
 * wrote and whichever tenant's instance closed.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { writeBundle } from "../../packages/deno/bundle.ts";
import { createEdgeWorker } from "../../packages/edge/worker.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { encodeBase64 } from "../_base64.ts";
import { tempDir } from "../_helpers.ts";
import { probe, straddleProbe } from "../runtime-wasm/_memory_probe.ts";
import { harness, toolEvent } from "../service/_api.ts";

/** Plugin `i`'s data: its tag at 1000; "AAAA" at 2000 for even ones, "CCCC" at 3000 for odd. */
const data = (i: number): Record<number, string> =>
  i % 2 === 0 ? { 1000: `tag${i}`, 2000: "AAAA" } : { 1000: `tag${i}`, 3000: "CCCC" };
/** What plugin `i` reports on every call: its own bytes at 1000, 2000 and 3000. */
const expected = (i: number) =>
  `tag${i}` + (i % 2 === 0 ? "AAAA" : "....") + (i % 2 === 0 ? "...." : "CCCC");

/** The six probes bundled as six tenants' hooks and served by `createEdgeWorker`. */
async function bundled(
  dir: string,
  isolation: "warm" | "fresh",
  plugin: (i: number) => Uint8Array,
): Promise<{ call: (i: number) => Promise<{ status: number; body: Record<string, unknown> }> }> {
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  const keys: string[] = [];
  try {
    for (let i = 0; i < TENANTS; i++) {
      const key = await h.tenant(`t${i}`);
      keys.push(key);
      const up = await h.call("PUT", "/v1/hooks/probe", {
        key,
        body: {
          files: {
            "HOOK.md": "---\nname: probe\ndescription: d\ntrigger: pre-tool-call\n" +
              `isolation: ${isolation}\n---\n`,
            "plugin.wasm": { base64: encodeBase64(plugin(i)) },
          },
        },
      });
      assertEquals(up.status, 201, JSON.stringify(up.body));
    }
    const summary = await writeBundle({ store: h.store, out: `${dir}/out` });
    assertEquals(summary.modules, 1, "the six plugins share one module");
  } finally {
    await h.close();
  }
  const bundle = JSON.parse(await Deno.readTextFile(`${dir}/out/bundle.json`));
  for (const entry of Object.values(bundle.plugins) as { pristineImage?: boolean }[]) {
    ok(entry.pristineImage, "each starts as exactly its image");
  }
  const modules: Record<string, WebAssembly.Module> = {};
  for (const entry of Deno.readDirSync(`${dir}/out/plugins`)) {
    const bytes = await Deno.readFile(`${dir}/out/plugins/${entry.name}`);
    modules[entry.name.replace(/\.wasm$/, "")] = new WebAssembly.Module(bytes);
  }
  const images = (await Deno.readFile(`${dir}/out/images.bin`)).buffer;
  const worker = createEdgeWorker(await Deno.readFile(`${dir}/out/registry.bin`), modules, {
    audit: () => Promise.resolve(),
    images,
  });
  return {
    call: async (i) => {
      const answer = await worker.fetch(
        new Request("http://edge/v1/events", {
          method: "POST",
          headers: { authorization: `Bearer ${keys[i]}`, "content-type": "application/json" },
          body: JSON.stringify(toolEvent("ls")),
        }),
      );
      return { status: answer.status, body: await answer.json() };
    },
  };
}

const TENANTS = 6;

for (const isolation of ["warm", "fresh"] as const) {
  Deno.test(`${isolation} instances in a bundle start from (and restore to) their own image`, async () => {
    const dir = await tempDir("hookbox-layers-");
    try {
      const { call } = await bundled(dir, isolation, (i) => probe(`probe_${i}`, data(i), true));
      // Each call overwrites the bytes it reports: a restore that missed them, or restored another
      // plugin's, shows in the next call's reason.
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < TENANTS; i++) {
          const { status, body } = await call(i);
          assertEquals(
            [status, body.decision, body.reason],
            [200, "block", expected(i)],
            `tenant ${i}, round ${round}: ${JSON.stringify(body)}`,
          );
        }
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("a warm restore writes a plugin's run again when a store from the block before reached it", async () => {
  const dir = await tempDir("hookbox-layers-");
  try {
    // Each tenant's tag starts a block: a run of its own over the base (the first plugin's image).
    // Each call's 8-byte store from the block before marks that block only, and the restore of it
    // covers the first bytes of the next, the tag's, with the base's.
    const { call } = await bundled(dir, "warm", (i) => straddleProbe(`straddle_${i}`, `T${i}_z`));
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < TENANTS; i++) {
        const { status, body } = await call(i);
        assertEquals([status, body.reason], [200, `T${i}_z`], `tenant ${i}, round ${round}`);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
