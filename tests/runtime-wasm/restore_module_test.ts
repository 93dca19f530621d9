/**
 * The warm-snapshot restorer module: its embedded bytes are its WAT source
 * assembled, and it restores exactly the marked blocks (plus the straddle),
 * zero-fills past the image and clears the marks — nothing else.
 */
import assert from "node:assert/strict";
import wabtInit from "wabt";
import {
  RESTORE_MODULE_BYTES,
  restorerFor,
} from "../../packages/runtime-wasm/instance/_restore.ts";

const SHIFT = 8;
const BLOCK = 1 << SHIFT;
const STRADDLE = 16;
const PAGE = 65536;

Deno.test("the embedded restorer bytes are _restore.wat assembled", async () => {
  const wabt = await wabtInit();
  const source = await Deno.readTextFile(
    new URL("../../packages/runtime-wasm/instance/_restore.wat", import.meta.url),
  );
  // multi_memory is a wabt feature its typings do not list yet.
  const features = { multi_memory: true } as Parameters<typeof wabt.parseWat>[2];
  const module = wabt.parseWat("_restore.wat", source, features);
  try {
    assert.deepEqual(new Uint8Array(module.toBinary({}).buffer), RESTORE_MODULE_BYTES);
  } finally {
    module.destroy();
  }
});

/** A live memory of `livePages` filled with 0xEE, an image of `imagePages` with a pattern. */
function setup(livePages: number, imagePages: number) {
  const live = new WebAssembly.Memory({ initial: livePages });
  const image = new WebAssembly.Memory({ initial: imagePages });
  const map = new WebAssembly.Memory({ initial: 1 });
  const liveBytes = new Uint8Array(live.buffer).fill(0xee);
  const imageBytes = new Uint8Array(image.buffer);
  for (let i = 0; i < imageBytes.length; i++) imageBytes[i] = (i * 7 + 3) & 0xff;
  const marks = new Uint8Array(map.buffer);
  const restore = restorerFor(
    new WebAssembly.Module(RESTORE_MODULE_BYTES as Uint8Array<ArrayBuffer>),
    live,
    map,
    image,
  );
  const run = () =>
    restore(
      Math.ceil(liveBytes.length / BLOCK),
      SHIFT,
      STRADDLE,
      imageBytes.length,
      liveBytes.length,
    );
  return { liveBytes, imageBytes, marks, run };
}

/** Which bytes of `live` now differ from 0xEE, as [from, to) ranges. */
function touched(live: Uint8Array): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < live.length; i++) {
    if (live[i] === 0xee) continue;
    const last = out.at(-1);
    if (last && last[1] === i) last[1] = i + 1;
    else out.push([i, i + 1]);
  }
  return out;
}

Deno.test("the restorer copies exactly the marked blocks and the straddle back, and clears the marks", () => {
  const { liveBytes, imageBytes, marks, run } = setup(2, 2);
  // Single blocks, a run of three, a block right after a clear group of 8,
  // one in the upper half of a group of 8 whose lower half is clear, and
  // the last block of the memory (its straddle would pass the end).
  // And a long run of 40 blocks.
  const long = Array.from({ length: 40 }, (_, k) => 100 + k);
  const marked = [0, 5, 6, 7, 9, 17, 30, 40, ...long, 511];
  for (const block of marked) marks[block] = 1;
  run();
  // Patterned bytes equal to 0xEE would be missed: check there are none in range.
  const expected: [number, number][] = [
    [0, BLOCK + STRADDLE],
    [5 * BLOCK, 8 * BLOCK + STRADDLE],
    [9 * BLOCK, 10 * BLOCK + STRADDLE],
    [17 * BLOCK, 18 * BLOCK + STRADDLE],
    [30 * BLOCK, 31 * BLOCK + STRADDLE],
    [40 * BLOCK, 41 * BLOCK + STRADDLE],
    [100 * BLOCK, 140 * BLOCK + STRADDLE],
    [511 * BLOCK, 512 * BLOCK],
  ];
  const restored = touched(liveBytes);
  const holes = imageBytes.findIndex((b) => b === 0xee);
  assert.ok(holes >= 0, "the pattern has 0xEE bytes: compare byte by byte instead");
  for (const [from, to] of expected) {
    assert.deepEqual(
      liveBytes.subarray(from, to),
      imageBytes.subarray(from, to),
      `[${from}, ${to})`,
    );
  }
  const outside = liveBytes.filter((b, i) =>
    !expected.some(([f, t]) => i >= f && i < t) && b !== 0xee
  );
  assert.equal(outside.length, 0, "nothing outside the marked blocks changed");
  assert.ok(restored.length > 0);
  assert.ok(marks.every((m) => m === 0), "every mark is cleared");
});

Deno.test("the restorer zero-fills marked blocks past the image (memory grown since the snapshot)", () => {
  const { liveBytes, imageBytes, marks, run } = setup(3, 2);
  const imageBlocks = (2 * PAGE) / BLOCK;
  marks[imageBlocks - 1] = 1; // the image's last block: straddles into the grown part
  marks[imageBlocks + 3] = 1;
  marks[3 * PAGE / BLOCK - 1] = 1;
  run();
  const end = 2 * PAGE;
  assert.deepEqual(liveBytes.subarray(end - BLOCK, end), imageBytes.subarray(end - BLOCK, end));
  assert.ok(
    liveBytes.subarray(end, end + STRADDLE).every((b) => b === 0),
    "the straddle past the image",
  );
  assert.equal(liveBytes[end + STRADDLE], 0xee);
  const grown = (imageBlocks + 3) * BLOCK;
  assert.ok(liveBytes.subarray(grown, grown + BLOCK + STRADDLE).every((b) => b === 0));
  assert.equal(liveBytes[grown - 1], 0xee);
  assert.equal(liveBytes[grown + BLOCK + STRADDLE], 0xee);
  assert.ok(liveBytes.subarray(3 * PAGE - BLOCK).every((b) => b === 0), "the memory's last block");
  assert.ok(marks.every((m) => m === 0));
});

Deno.test("the restorer leaves an unmarked memory untouched", () => {
  const { liveBytes, run } = setup(1, 1);
  run();
  assert.equal(touched(liveBytes).length, 0);
});
