/**
 * The warm-up plugin assembled from its source, `packages/deno/serve/warm_up.wat`
 * (for the script that writes its bytes and the test that checks them).
 *
 * @module
 */
import wabtInit from "wabt";

/** Base64 of the plugin assembled from `warm_up.wat`. */
export async function warmUpPluginSource(): Promise<string> {
  const wabt = await wabtInit();
  const source = await Deno.readTextFile(
    new URL("../packages/deno/serve/warm_up.wat", import.meta.url),
  );
  const mod = wabt.parseWat("warm_up.wat", source);
  try {
    const bytes = mod.toBinary({}).buffer as Uint8Array;
    return btoa(String.fromCharCode(...bytes));
  } finally {
    mod.destroy();
  }
}
