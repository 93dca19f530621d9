/**
 * One conformance suite, three runtimes (issue 10): the cases of cases.ts —
 * allow, block, rewrite, chains, fail open/closed, a QuickJS JS hook, an
 * AssemblyScript hook and every plugin of the hostile corpus — run against
 * the library on Deno, the library on a real Node (the machine's `node`) and
 * over HTTP against a real workerd serving a `hookbox bundle` of a store
 * holding each case as a tenant. Every run must give every case's expected
 * answer.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import * as esbuild from "esbuild";
import { writeBundle } from "../../packages/deno/bundle.ts";
import { denoFs } from "../../packages/host-deno/fs.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { encodeBase64 } from "../_base64.ts";
import { ROOT } from "../_helpers.ts";
import { startWorkerd } from "../_workerd.ts";
import { harness } from "../service/_api.ts";
import {
  BASIC,
  type Case,
  caseEvent,
  comparable,
  corpusCases,
  type Expected,
  observe,
  type Observed,
  unexpected,
} from "./cases.ts";
import { hookDir, prepareCases } from "./_prepare.ts";
import { runCases } from "./_run.ts";

const CORPUS_NAMES = [...Deno.readDirSync(`${ROOT}/tests/corpus`)]
  .filter((e) => e.name.endsWith(".wat"))
  .map((e) => e.name.slice(0, -4))
  .sort();
const CASES: Case[] = [...BASIC, ...corpusCases(CORPUS_NAMES)];

const root = await Deno.makeTempDir({ prefix: "hookbox-conformance-" });
const prepared = prepareCases(root, CASES);

/**
 * Every case's mismatches, as one readable failure. `adjust` turns a case's
 * expectation into this runtime's (the stated Node difference, hooks the
 * service refused at upload).
 */
function check(
  runtime: string,
  observed: Record<string, Observed[]>,
  adjust: (c: Case, expected: Expected) => Expected = (_, e) => e,
): void {
  const wrong: string[] = [];
  for (const c of CASES) {
    c.events.forEach((spec, i) => {
      const got = observed[c.name]?.[i];
      const { node, ...base } = spec.expect;
      const expected = adjust(c, { ...base, ...(runtime === "node" ? node : {}) });
      const actual = got ? comparable(expected, got) : undefined;
      try {
        assertEquals(actual, expected);
      } catch {
        wrong.push(
          `${c.name}[${i}] ${JSON.stringify(actual)}\n   expected ${JSON.stringify(expected)}`,
        );
      }
    });
  }
  ok(wrong.length === 0, `${runtime}: ${wrong.length} answers differ\n${wrong.join("\n")}`);
}

Deno.test("conformance: the library on Deno", async () => {
  await prepared;
  check("deno", await runCases(denoFs, root, CASES));
});

Deno.test("conformance: the library on Deno, one module for plugins that differ in data", async () => {
  await prepared;
  check("deno", await runCases(denoFs, root, CASES, { shareCode: true }));
});

Deno.test("conformance: the library on Node, and with one module for plugins that differ in data", async () => {
  await prepared;
  try {
    await esbuild.build({
      entryPoints: [new URL("./_node_entry.ts", import.meta.url).pathname],
      outfile: `${root}/conformance.mjs`,
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
  for (const mode of ["", "share-code"]) {
    const out = await new Deno.Command("node", {
      args: [`${root}/conformance.mjs`, root, mode],
    }).output();
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    check("node", JSON.parse(new TextDecoder().decode(out.stdout)));
  }
});

Deno.test("conformance: a bundle in workerd, over HTTP", async () => {
  await prepared;
  const dir = `${root}/.workerd`;
  await Deno.mkdir(dir, { recursive: true });
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  const keys = new Map<string, string>();
  /** Hooks the service refused at upload ("case/hook"), with the problem's code. */
  const refused = new Map<string, string>();
  for (const c of CASES) {
    keys.set(c.name, await h.tenant(c.name));
    for (const spec of c.hooks) {
      const folder = hookDir(root, c.name, spec.name);
      const up = await h.call("PUT", `/v1/hooks/${spec.name}`, {
        key: keys.get(c.name)!,
        body: {
          files: {
            "HOOK.md": await Deno.readTextFile(`${folder}/HOOK.md`),
            "plugin.wasm": { base64: encodeBase64(await Deno.readFile(`${folder}/plugin.wasm`)) },
          },
        },
      });
      if (up.status === 422 && up.body.error.code === "HOOK_REJECTED") {
        refused.set(`${c.name}/${spec.name}`, up.body.error.problems[0].code);
        continue;
      }
      assertEquals(up.status, 201, `${c.name}/${spec.name}: ${JSON.stringify(up.body)}`);
    }
  }
  await writeBundle({ store: h.store, out: `${dir}/out` });
  await h.close();
  const workerd = await startWorkerd(`${dir}/out`);
  const observed: Record<string, Observed[]> = {};
  try {
    for (const c of CASES) {
      const seen: Observed[] = observed[c.name] = [];
      for (const spec of c.events) {
        const res = await fetch(`${workerd.url}/v1/events`, {
          method: "POST",
          headers: { authorization: `Bearer ${keys.get(c.name)}` },
          body: JSON.stringify(caseEvent(`${root}/${c.name}`, spec)),
        });
        const body = await res.json();
        assertEquals(res.status, 200, `${c.name}: ${JSON.stringify(body)}`);
        seen.push(observe(body));
      }
    }
  } finally {
    await workerd.stop();
  }
  // A plugin the library refuses when it loads it is refused by the service when it is
  // uploaded, with the same code; the tenant's other hooks answer as in the library.
  check("workerd", observed, (c, expected) => {
    const gone = c.hooks.filter((h) => refused.has(`${c.name}/${h.name}`)).map((h) => h.name);
    if (gone.length === 0) return expected;
    const hooks = expected.hooks.filter((r) => {
      const [name, , code] = r.split(":");
      if (!gone.includes(name!)) return true;
      assertEquals(refused.get(`${c.name}/${name}`), code, `${c.name}: refused with another code`);
      return false;
    });
    const { exit: _, stdout: _out, ...rest } = expected;
    return { ...rest, hooks };
  });
  // What the service refuses before it stores anything: imports, features, invalid modules, tables.
  assertEquals([...refused.keys()].map((k) => k.split("/")[0]).sort(), [
    "corpus-bad-import",
    "corpus-bad-import-env",
    "corpus-bad-import-extism",
    "corpus-invalid-fuel-global",
    "corpus-invalid-fuel-local",
    "corpus-multi-memory",
    "corpus-shared-wait",
    "corpus-table-bomb",
    "corpus-table-many",
    "corpus-wait-unshared",
  ]);
});

Deno.test("conformance: every corpus plugin has an expected answer", () => {
  assertEquals(unexpected(CORPUS_NAMES), []);
});

globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(root, { recursive: true });
  } catch { /* already gone */ }
});
