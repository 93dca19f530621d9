/**
 * Writes the bytes of `packages/deno/serve/warm_up.wat` (the plugin `hookbox
 * serve` warms itself up with) into `packages/deno/serve/_warm_up_plugin.ts`,
 * so the server needs no WebAssembly text assembler at run time.
 * `tests/service/warm_up_test.ts` fails when the two disagree.
 *
 *     deno run -A scripts/build_warm_up_plugin.ts
 *
 * @module
 */
import { warmUpPluginSource } from "../tests/_warm_up_source.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const base64 = await warmUpPluginSource();
await Deno.writeTextFile(
  `${ROOT}packages/deno/serve/_warm_up_plugin.ts`,
  `/**
 * The bytes of \`warm_up.wat\` (base64), written by
 * \`deno run -A scripts/build_warm_up_plugin.ts\`; do not edit.
 *
 * @module
 */

/** The warm-up plugin, base64. */
export const WARM_UP_PLUGIN_BASE64 =
  "${base64}";
`,
);
console.log(`wrote packages/deno/serve/_warm_up_plugin.ts (${base64.length} base64 characters)`);
