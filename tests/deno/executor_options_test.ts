/**
 * createExecutor's machine options: flags are checked, and the WebAssembly
 * tier-up tuning (packages/deno/wasm_tiering.ts) never gets in the way of
 * a dispatch, whatever HOOKBOX_WASM_TIERING_BUDGET says.
 */
import assert from "node:assert/strict";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("createExecutor refuses a machine flag that is not a boolean, naming it", () => {
  for (const flag of ["wasmWorker", "scanCache", "tuneWasmTiering"]) {
    assert.throws(
      () => createExecutor({ [flag]: "yes" } as never),
      (err: unknown) => err instanceof TypeError && err.message === `${flag} must be a boolean`,
    );
  }
});

Deno.test("a WebAssembly hook answers whatever HOOKBOX_WASM_TIERING_BUDGET says", async () => {
  const dir = await tempDir("hookbox-tiering-");
  try {
    const wat = await Deno.readTextFile(new URL("../corpus/guard_wasi.wat", import.meta.url));
    const { default: wabtInit } = await import("wabt");
    const wasm = (await wabtInit()).parseWat("g.wat", wat, {}).toBinary({}).buffer;
    await Deno.mkdir(`${dir}/guard`);
    await Deno.writeTextFile(
      `${dir}/guard/HOOK.md`,
      "---\nname: guard\ndescription: t\ntrigger: pre-tool-call\nisolation: warm\n---\n",
    );
    await Deno.writeFile(`${dir}/guard/plugin.wasm`, wasm);
    const script = `${dir}/run.ts`;
    await Deno.writeTextFile(
      script,
      `import { createExecutor } from ${
        JSON.stringify(new URL("../../packages/hookbox/deno.ts", import.meta.url).href)
      };
const ex = createExecutor({ projectDir: ${JSON.stringify(dir)}, userDir: null });
const event = { event_type: "pre-tool-call", session_id: "s", tool_name: "Bash" };
const answers = [];
for (const command of ["ls", "rm -rf /"]) {
  answers.push((await ex.dispatch({ ...event, tool_input: { command } })).decision);
}
await ex.close();
console.log(answers.join(" "));
`,
    );
    for (const budget of [undefined, "0", "250000", "not a number", "-5", "99999999999"]) {
      const env: Record<string, string> = budget === undefined
        ? {}
        : { HOOKBOX_WASM_TIERING_BUDGET: budget };
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "--config",
          new URL("../../deno.json", import.meta.url).pathname,
          script,
        ],
        env,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout).trim();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      assert.equal(text, "allow block", `budget ${budget}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
