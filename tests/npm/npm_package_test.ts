/**
 * `deno task npm` (issue 10): the npm package of the Web-API core, installed
 * in a plain Node project (`node_modules/@hookbox/hookbox`, its dependencies
 * resolved by name) and imported as a Node platform would:
 * `import { createCoreExecutor, createWasmRuntime } from "@hookbox/hookbox"`.
 * Its `.d.ts` types check a TypeScript consumer under NodeNext resolution.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import ts from "typescript";
import { writeNpmPackage } from "../../scripts/npm.ts";
import { hookMd, ROOT, tempDir } from "../_helpers.ts";
import { corpus } from "../runtime-wasm/_corpus.ts";

const CONSUMER = `
import { createCoreExecutor, createWasmRuntime, HookboxError } from "@hookbox/hookbox";
import { nodeFs } from "@hookbox/hookbox/node";

const executor = createCoreExecutor({
  fs: nodeFs,
  platformDirs: [process.argv[2]],
  runtimes: {
    wasm: createWasmRuntime({ loadBytes: ({ entry }) => nodeFs.readFile(entry.runtime === "wasm" ? entry.path : "", 8 << 20) }),
  },
});
const event = (command) => ({
  event_type: "pre-tool-call",
  session_id: "node",
  tool_name: "Bash",
  tool_input: { command },
});
const out = [];
for (const command of ["rm -rf /", "ls"]) {
  const r = await executor.dispatch(event(command));
  out.push({ decision: r.decision, reason: r.reason, hooks: r.hooks.map((h) => h.outcome) });
}
try {
  await executor.dispatch({ event_type: "nope" });
} catch (err) {
  out.push({ error: err instanceof HookboxError ? err.code : String(err) });
}
// A FIFO where a file is read: refused at once instead of waiting for a writer.
await nodeFs.readFile(process.argv[3], 1024).catch((err) => out.push({ fifo: err.code }));
await executor.close();
console.log(JSON.stringify(out));
`;

Deno.test("the npm package runs on plain Node, imported by name", async () => {
  const dir = await tempDir("hookbox-npm-");
  try {
    const { dependencies } = await writeNpmPackage(`${dir}/pkg`);
    const pkg = JSON.parse(await Deno.readTextFile(`${dir}/pkg/package.json`));
    assertEquals(Object.keys(pkg.exports), [".", "./node", "./wasm"]);
    assertEquals(pkg.type, "module");
    ok(!("typescript" in dependencies) && !("esbuild" in dependencies), "no build tools");
    for (const adapterOnly of ["deno", "host-deno", "compile", "cli"]) {
      const there = await Deno.stat(`${dir}/pkg/esm/${adapterOnly}`).then(() => true, () => false);
      ok(!there, `the package holds packages/${adapterOnly}`);
    }
    // A Node project with the package and its dependencies under node_modules.
    const app = `${dir}/app`;
    await Deno.mkdir(`${app}/node_modules/@hookbox`, { recursive: true });
    await new Deno.Command("cp", {
      args: ["-r", `${dir}/pkg`, `${app}/node_modules/@hookbox/hookbox`],
    })
      .output();
    for (const name of Object.keys(dependencies)) {
      const link = `${app}/node_modules/${name}`;
      await Deno.mkdir(link.slice(0, link.lastIndexOf("/")), { recursive: true });
      await Deno.symlink(await Deno.realPath(`${ROOT}/node_modules/${name}`), link);
    }
    await Deno.writeTextFile(`${app}/package.json`, '{"type": "module"}');
    await Deno.writeTextFile(`${app}/main.js`, CONSUMER);
    await Deno.mkdir(`${app}/hooks/guard`, { recursive: true });
    await Deno.writeTextFile(`${app}/hooks/guard/HOOK.md`, hookMd({ name: "guard" }));
    await Deno.writeFile(`${app}/hooks/guard/plugin.wasm`, await corpus("guard_wasi"));

    const made = await new Deno.Command("mkfifo", { args: [`${app}/fifo`] }).output();
    ok(made.success, "mkfifo");
    const run = await new Deno.Command("node", {
      args: ["main.js", `${app}/hooks`, `${app}/fifo`],
      cwd: app,
    }).output();
    const stderr = new TextDecoder().decode(run.stderr);
    assertEquals(run.code, 0, stderr);
    assertEquals(JSON.parse(new TextDecoder().decode(run.stdout)), [
      { decision: "block", reason: "rm -rf is not allowed", hooks: ["block"] },
      { decision: "allow", reason: null, hooks: ["ok"] },
      { error: "EVENT_INVALID" },
      { fifo: "HOOK_DIR_UNREADABLE" },
    ]);

    // The same consumer in TypeScript type-checks against the package's .d.ts.
    await Deno.writeTextFile(
      `${app}/main.ts`,
      `declare const process: { argv: string[] };\n${
        CONSUMER.replace("(command) =>", "(command: string) =>")
          .replace("const out = [];", "const out: unknown[] = [];")
      }`,
    );
    const program = ts.createProgram([`${app}/main.ts`], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) =>
      ts.flattenDiagnosticMessageText(d.messageText, "\n")
    );
    assertEquals(problems, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
