/**
 * Runs the conformance cases through the library (the Web-API core's
 * executor and wasm runtime) on hook folders read through `fs`. Web APIs
 * only: the Deno test calls it directly, the Node run bundles it.
 *
 * @module
 */
import { createCoreExecutor, createWasmRuntime } from "../../packages/hookbox/mod.ts";
import type { HostFs } from "../../packages/core/host.ts";
import { type Case, caseEvent, observe, type Observed } from "./cases.ts";

/** Module cap for reading plugins (the policy's cap is applied by the runtime). */
const READ_CAP = 16 << 20;

/**
 * Dispatches every event of every case: case `c`'s hooks are the project
 * hooks of work dir `<root>/<c.name>`. Returns what each event got, by case.
 */
export async function runCases(
  fs: HostFs,
  root: string,
  cases: Case[],
  options: { shareCode?: boolean } = {},
): Promise<Record<string, Observed[]>> {
  const executor = createCoreExecutor({
    fs,
    runtimes: {
      wasm: createWasmRuntime({
        ...(options.shareCode ? { shareCode: true } : {}),
        loadBytes: (hook) =>
          hook.entry.runtime === "wasm"
            ? fs.readFile(hook.entry.path, READ_CAP)
            : Promise.reject(new Error(`${hook.name}: not a wasm hook`)),
      }),
    },
  });
  const out: Record<string, Observed[]> = {};
  try {
    for (const c of cases) {
      const seen: Observed[] = out[c.name] = [];
      for (const spec of c.events) {
        seen.push(observe(await executor.dispatch(caseEvent(`${root}/${c.name}`, spec))));
      }
    }
  } finally {
    await executor.close();
  }
  return out;
}
