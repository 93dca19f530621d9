/**
 * `sha256HexInPieces`: the same digest as `sha256Hex`, with the event loop
 * turning while a big input is hashed.
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../packages/core/bytes.ts";
import { sha256HexInPieces } from "../../packages/host-deno/sha256.ts";

Deno.test("sha256HexInPieces gives sha256Hex's digest, small or big", async () => {
  for (const size of [0, 1, 1024 * 1024, 1024 * 1024 + 1, 5 * 1024 * 1024 + 77]) {
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i += 4093) bytes[i] = i & 0xff;
    assert.equal(await sha256HexInPieces(bytes), await sha256Hex(bytes), `${size} bytes`);
  }
});

Deno.test("sha256HexInPieces lets the loop turn while it hashes 16 MiB", async () => {
  const bytes = new Uint8Array(16 * 1024 * 1024);
  let turns = 0;
  let hashing = true;
  const ticker = (async () => {
    while (hashing) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      turns++;
    }
  })();
  await sha256HexInPieces(bytes);
  hashing = false;
  await ticker;
  assert.ok(turns >= 15, `the loop turned ${turns} times`);
});
