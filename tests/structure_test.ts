/**
 * The workspace's package graph (std's `_tools/check_circular_package_dependencies.ts`
 * is the model): every folder of `packages/` is a package with its own
 * `deno.json` (named `@hookbox/<folder>`), entry module and README; the
 * packages import each other one way only (no cycle); a package imports of
 * another only the files that package exports, so never a `_private` one; and
 * Deno-bound code lives in the Deno-bound packages alone.
 */
import assert from "node:assert/strict";
import { ROOT } from "./_helpers.ts";

const PACKAGES = `${ROOT}/packages`;

/** The packages that may use `Deno.*`: the only way Deno-bound code is marked. */
const DENO_BOUND = new Set(["cli", "compile", "deno", "host-deno"]);

const IMPORT =
  /(?:import|export)[^"';]*?from\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;

interface Package {
  name: string;
  config: { name: string; exports: Record<string, string> };
  files: string[];
}

async function packages(): Promise<Map<string, Package>> {
  const found = new Map<string, Package>();
  for await (const entry of Deno.readDir(PACKAGES)) {
    if (!entry.isDirectory) continue;
    const dir = `${PACKAGES}/${entry.name}`;
    const config = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`));
    const files: string[] = [];
    const walk = async (at: string) => {
      for await (const e of Deno.readDir(at)) {
        if (e.isDirectory) await walk(`${at}/${e.name}`);
        else if (e.name.endsWith(".ts")) files.push(`${at}/${e.name}`.slice(dir.length + 1));
      }
    };
    await walk(dir);
    found.set(entry.name, { name: entry.name, config, files });
  }
  return found;
}

/** Imports between packages: [from package, from file, to package, to file]. */
async function crossImports(
  all: Map<string, Package>,
): Promise<[string, string, string, string][]> {
  const out: [string, string, string, string][] = [];
  for (const pkg of all.values()) {
    for (const file of pkg.files) {
      const path = `${PACKAGES}/${pkg.name}/${file}`;
      for (const m of (await Deno.readTextFile(path)).matchAll(IMPORT)) {
        const target = new URL(m[1] ?? m[2]!, `file://${path}`).pathname;
        if (!target.startsWith(`${PACKAGES}/`)) continue;
        const [to, ...rest] = target.slice(PACKAGES.length + 1).split("/");
        if (to !== pkg.name) out.push([pkg.name, file, to!, rest.join("/")]);
      }
    }
  }
  return out;
}

/** Source without comments, so that prose about `Deno.*` is not code. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");

Deno.test("every package has its deno.json, entry module and README, and is in the workspace", async () => {
  const all = await packages();
  assert.ok(all.size >= 12, `${all.size} packages`);
  const root = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`));
  assert.deepEqual(
    [...root.workspace].sort(),
    [...all.keys()].map((name) => `./packages/${name}`).sort(),
  );
  for (const pkg of all.values()) {
    assert.equal(pkg.config.name, `@hookbox/${pkg.name}`);
    const entry = pkg.config.exports["."];
    assert.ok(entry && pkg.files.includes(entry.slice(2)), `${pkg.name}: entry ${entry}`);
    const readme = await Deno.readTextFile(`${PACKAGES}/${pkg.name}/README.md`);
    assert.ok(readme.startsWith(`# @hookbox/${pkg.name}\n`), `${pkg.name}: README`);
    for (const [sub, file] of Object.entries(pkg.config.exports)) {
      assert.ok(pkg.files.includes(file.slice(2)), `${pkg.name}: export ${sub} -> ${file}`);
    }
  }
});

Deno.test("packages import each other one way, and only what the other exports", async () => {
  const all = await packages();
  const imports = await crossImports(all);
  const unexported = imports.filter(([, , to, file]) =>
    !Object.values(all.get(to)!.config.exports).includes(`./${file}`)
  ).map(([from, file, to, target]) => `${from}/${file} -> ${to}/${target}`);
  assert.deepEqual(unexported, [], "imports of files another package does not export");
  assert.ok(
    imports.every(([, , , file]) => !file.split("/").pop()!.startsWith("_")),
    "no import of another package's _private file",
  );
  // Cycles: a depth-first walk of the package graph.
  const edges = new Map<string, Set<string>>();
  for (const [from, , to] of imports) {
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from)!.add(to);
  }
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (pkg: string, path: string[]) => {
    if (state.get(pkg) === "done") return;
    if (state.get(pkg) === "open") {
      cycles.push([...path.slice(path.indexOf(pkg)), pkg].join(" -> "));
      return;
    }
    state.set(pkg, "open");
    for (const next of edges.get(pkg) ?? []) visit(next, [...path, pkg]);
    state.set(pkg, "done");
  };
  for (const pkg of all.keys()) visit(pkg, []);
  assert.deepEqual(cycles, [], "package cycles");
  // The core is the bottom layer: it imports no other package.
  assert.deepEqual([...edges.get("core") ?? []], []);
});

Deno.test("Deno-bound code lives only in the Deno-bound packages", async () => {
  const all = await packages();
  const offences: string[] = [];
  for (const pkg of all.values()) {
    if (DENO_BOUND.has(pkg.name)) continue;
    for (const file of pkg.files) {
      const text = code(await Deno.readTextFile(`${PACKAGES}/${pkg.name}/${file}`));
      if (/\bDeno\./.test(text)) offences.push(`${pkg.name}/${file}`);
    }
  }
  assert.deepEqual(offences, []);
  for (const name of DENO_BOUND) assert.ok(all.has(name), name);
});

Deno.test("every package's entry module is clean under deno doc --lint on its own", async () => {
  const all = await packages();
  const failures: string[] = [];
  // A few at a time: each is a deno process.
  const queue = [...all.values()];
  await Promise.all(Array.from({ length: 4 }, async () => {
    for (let pkg = queue.shift(); pkg !== undefined; pkg = queue.shift()) {
      const entry = `${PACKAGES}/${pkg.name}/${pkg.config.exports["."]!.slice(2)}`;
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["doc", "--lint", entry],
        cwd: ROOT,
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (out.code !== 0) {
        const said = new TextDecoder().decode(out.stderr);
        failures.push(`${pkg.name}: ${said.slice(0, 600)}`);
      }
    }
  }));
  assert.deepEqual(failures, []);
});
