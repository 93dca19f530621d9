/**
 * `readCapped()`: a file read whole up to its cap, sized for the file rather
 * than the cap, and still whole (or refused) when it grows while it is read.
 */
import assert from "node:assert/strict";
import { type CappedSource, readCapped } from "../../packages/core/host.ts";
import { HookboxError } from "../../packages/core/errors.ts";

/** A file that says it is `claimed` bytes long and then yields `content`, `chunk` bytes at a time. */
function source(
  claimed: number,
  content: Uint8Array,
  chunk = 7,
): CappedSource & { asked: number[] } {
  let at = 0;
  const asked: number[] = [];
  return {
    asked,
    size: () => Promise.resolve(claimed),
    read(into) {
      asked.push(into.length);
      const n = Math.min(chunk, into.length, content.length - at);
      into.set(content.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
  };
}

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => i % 251);

Deno.test("readCapped() reads a small file under a large cap into a buffer of its own size", async () => {
  const file = source(30, bytes(30));
  const out = await readCapped("/f", file, 64 * 1024 * 1024);
  assert.deepEqual(out, bytes(30));
  // Never offered more room than the file plus the one byte that shows its end.
  assert.ok(Math.max(...file.asked) <= 31, `asked for ${Math.max(...file.asked)} bytes`);
});

Deno.test("readCapped() keeps every byte of a file that grows while read, under the cap", async () => {
  const out = await readCapped("/f", source(10, bytes(300)), 1000);
  assert.deepEqual(out, bytes(300));
});

Deno.test("readCapped() refuses a file that grows past the cap while read", async () => {
  await assert.rejects(
    readCapped("/f", source(10, bytes(300)), 100),
    (err) => err instanceof HookboxError && err.code === "HOOK_FILE_TOO_LARGE",
  );
});

Deno.test("readCapped() refuses a file over the cap before reading it", async () => {
  const file = source(101, bytes(101));
  await assert.rejects(
    readCapped("/f", file, 100),
    (err) => err instanceof HookboxError && err.code === "HOOK_FILE_TOO_LARGE",
  );
  assert.deepEqual(file.asked, []);
});
