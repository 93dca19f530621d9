/**
 * Run by `matcher_memory_test.ts` as `deno run --v8-flags=--expose-gc`:
 * holds `count` manifests with a distinct ~2,000-instruction pattern each,
 * their matchers compiled through `manifestMatcher` as selection compiles
 * them, and prints the heap they keep (after a full collection) and whether
 * every manifest still answers as RE2 does.
 *
 * @module
 */
import { manifestMatcher } from "../../../packages/core/dispatch/select.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --v8-flags=--expose-gc");
const count = Number(Deno.args[0] ?? 400);

const heap = () => {
  gc();
  gc();
  return Deno.memoryUsage().heapUsed;
};

const before = heap();
const manifests = Array.from({ length: count }, (_, i) => ({
  matcher: { pattern: `w${i}x[a-z]{0,1000}y` },
}));
let instructions = 0;
for (const manifest of manifests) {
  const matcher = manifestMatcher(manifest, "pattern")!;
  instructions += matcher.instructions;
  matcher.test("w0xabcy"); // a search, as selection makes
}
const held = heap() - before;
const answers = manifests.map((m, i) =>
  manifestMatcher(m, "pattern")!.test(`..w${i}xabc y`) === false &&
  manifestMatcher(m, "pattern")!.test(`..w${i}xabcy`) === true
);
console.log(JSON.stringify({
  held,
  instructions,
  right: answers.filter(Boolean).length,
  keepsManifests: manifests.length,
}));
