/**
 * Distinct small JS hooks, one per tenant, for the edge benchmarks (and a
 * service store holding them, `tenantStore`): five
 * kinds a platform's tenants write (a word guard, a function-style tool
 * guard, a context injector, an input rewriter, a path guard), each with
 * its tenant's own words, patterns and messages, so that no two compile to
 * the same plugin.
 *
 * @module
 */
import { compileJsHook } from "../packages/compile/js.ts";
import { openSqliteStore } from "../packages/store-sqlite/sqlite.ts";
import { encodeBase64 } from "../tests/_base64.ts";
import { harness } from "../tests/service/_api.ts";

/** The script (`scripts/run.js` or `.mjs`) of tenant `i`'s hook. */
export function tenantScript(i: number): { name: string; source: string } {
  const word = `w${(i * 7919) % 100_003}`;
  const words = Array.from({ length: 2 + (i % 5) }, (_, k) => `${word}x${k}`);
  switch (i % 5) {
    case 0:
      return {
        name: "run.js",
        source: `const fs = require("fs");
const e = JSON.parse(fs.readFileSync(0, "utf8"));
const banned = ${JSON.stringify(words)};
const command = String(e.tool_input?.command ?? "");
const hit = banned.find((w) => command.includes(w));
if (hit) {
  process.stderr.write("tenant ${i} does not allow " + hit);
  process.exit(2);
}
`,
      };
    case 1:
      return {
        name: "run.mjs",
        source: `const TOOLS = /^(${words.join("|")})$/;
export default function (event) {
  if (TOOLS.test(event.tool_name ?? "")) {
    return { decision: "block", reason: \`tenant ${i}: \${event.tool_name} is not for this project\` };
  }
}
`,
      };
    case 2:
      return {
        name: "run.mjs",
        source: `const NOTES = ${JSON.stringify(words.map((w) => `Remember ${w} (tenant ${i}).`))};
export default function (event) {
  const note = NOTES[(event.session_id ?? "").length % NOTES.length];
  return { inject: [{ text: note }] };
}
`,
      };
    case 3:
      return {
        name: "run.mjs",
        source: `const FLAG = ${JSON.stringify(`--${word}`)};
export default function (event) {
  const command = event.tool_input?.command;
  if (typeof command === "string" && command.startsWith("git push") && !command.includes(FLAG)) {
    return { modified_input: { ...event.tool_input, command: command + " " + FLAG } };
  }
}
`,
      };
    default:
      return {
        name: "run.js",
        source: `const fs = require("fs");
const e = JSON.parse(fs.readFileSync(0, "utf8"));
const roots = ${JSON.stringify(words.map((w) => `/srv/${w}/`))};
const path = String(e.tool_input?.file_path ?? e.tool_input?.path ?? "");
for (const root of roots) {
  if (path.startsWith(root)) {
    console.log(JSON.stringify({ decision: "block", reason: "tenant ${i} keeps " + root + " read-only" }));
    process.exit(0);
  }
}
`,
      };
  }
}

/** A command tenant `i`'s hook blocks when the event is a Bash call running it (kinds 0 and 1). */
export function blockedBy(i: number): { tool_name: string; command: string } | null {
  const word = `w${(i * 7919) % 100_003}`;
  if (i % 5 === 0) return { tool_name: "Bash", command: `echo ${word}x0` };
  if (i % 5 === 1) return { tool_name: `${word}x0`, command: "ls" };
  return null;
}

/**
 * A service store at `${dir}/hookbox.db` with `tenants` tenants, each with its
 * own warm JS hook ({@linkcode tenantScript}), compiled two at a time and
 * cached by content in `.cache/bench-edge-tenants` (sources kept in
 * `.cache/bench-edge-tenants-src`: a hook's build index is by path, so the
 * same paths find their plugins without building again). Resolves to each
 * tenant's key and the open harness (the caller closes it).
 */
export async function tenantStore(
  dir: string,
  tenants: number,
): Promise<{ keys: string[]; h: Awaited<ReturnType<typeof harness>> }> {
  const plugins: Uint8Array[] = new Array(tenants);
  let next = 0;
  await Promise.all([0, 1].map(async () => {
    while (next < tenants) {
      const i = next++;
      const { name, source } = tenantScript(i);
      const folder = `${SOURCES}/t${i}/scripts`;
      await Deno.mkdir(folder, { recursive: true });
      await Deno.writeTextFile(`${folder}/${name}`, source);
      plugins[i] = (await compileJsHook(`${folder}/${name}`, { cacheDir: CACHE })).bytes;
    }
  }));
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  const keys: string[] = [];
  for (let i = 0; i < tenants; i++) {
    const key = await h.tenant(`t${i}`);
    const res = await h.call("PUT", "/v1/hooks/own", {
      key,
      body: {
        files: {
          "HOOK.md": "---\nname: own\ndescription: the tenant's own hook\n" +
            "trigger: pre-tool-call\nisolation: warm\n---\n",
          "plugin.wasm": { base64: encodeBase64(plugins[i]!) },
        },
      },
    });
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
    keys.push(key);
  }
  return { keys, h };
}

const CACHE = new URL("../.cache/bench-edge-tenants", import.meta.url).pathname;
const SOURCES = `${CACHE}-src`;
