import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { deflateRawSync } from "node:zlib";
import { similarOrder } from "../../packages/deno/_similar_order.ts";

/** Deterministic bytes (xorshift32). */
function random(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** `base` with a few bytes changed and a few inserted: what a hook from the same template differs in. */
function variant(base: Uint8Array, seed: number): Uint8Array {
  const noise = random(seed, 64);
  const at = 100 + (noise[0]! % 200);
  const out = new Uint8Array(base.length + 7);
  out.set(base.subarray(0, at));
  out.set(noise.subarray(1, 8), at);
  out.set(base.subarray(at), at + 7);
  for (let i = 8; i < 24; i++) out[(noise[i]! * 37 + i * 101) % out.length] = noise[i + 24]!;
  return out;
}

const FAMILIES = 5;
const EACH = 40;
// Interleaved as tenants come: a0 b0 c0 d0 e0 a1 b1 …, each 12 KB (deflate's window is 32 KiB).
const templates = Array.from({ length: FAMILIES }, (_, f) => random(f + 1, 12_000));
const items: Uint8Array[] = [];
const family: number[] = [];
for (let i = 0; i < EACH; i++) {
  for (let f = 0; f < FAMILIES; f++) {
    items.push(variant(templates[f]!, 1000 + i * FAMILIES + f));
    family.push(f);
  }
}

/** Bytes of `order`'s items deflated 32 to a chunk, as `hookbox bundle` packs images. */
function packed(order: number[]): number {
  let total = 0;
  for (let c = 0; c < order.length; c += 32) {
    const parts = order.slice(c, c + 32).map((i) => items[i]!);
    const joined = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
    let at = 0;
    for (const p of parts) joined.set(p, (at += p.length) - p.length);
    total += deflateRawSync(joined, { level: 9 }).length;
  }
  return total;
}

Deno.test("similar images are packed side by side, so a bundle's images deflate to a fraction", () => {
  const order = similarOrder(items);
  assertEquals([...order].sort((a, b) => a - b), items.map((_, i) => i), "a permutation");
  // Each template's variants come one after another.
  const runs = order.filter((i, k) => k === 0 || family[i] !== family[order[k - 1]!]).length;
  assertEquals(runs, FAMILIES, order.map((i) => family[i]).join(""));
  const asCame = packed(items.map((_, i) => i));
  const similar = packed(order);
  // Interleaved, each variant's kin is 48 KB back, out of deflate's reach: it barely shrinks.
  ok(similar * 5 < asCame, `${similar} bytes side by side, ${asCame} as they came`);
  assertEquals(similarOrder(items), order, "deterministic");
});

Deno.test("strings too short to sketch, empty and equal ones are ordered without error", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  assertEquals(similarOrder([]), []);
  assertEquals(similarOrder([bytes(""), bytes("abc"), bytes("abc")]), [0, 1, 2]);
  const same = bytes("the same hook image, twice over");
  assertEquals(similarOrder([same, bytes("x".repeat(40)), same]), [0, 2, 1]);
});

Deno.test("megabyte images are sketched from the same smallest hashes as small ones", () => {
  // Two 2 MB variants of one template and an unrelated one: the variants still pair up, and a
  // string of few distinct shingles (zeros) is ordered like any other.
  const big = random(77, 2_000_000);
  const other = random(78, 2_000_000);
  const zeros = new Uint8Array(1_000_000);
  assertEquals(similarOrder([big, other, variant(big, 5), zeros, zeros]), [0, 2, 1, 3, 4]);
});

Deno.test("ten thousand equal images are ordered in one pass, in the order they came", () => {
  const same = random(9, 600);
  const order = similarOrder(Array.from({ length: 10_000 }, () => same));
  assertEquals(order, Array.from({ length: 10_000 }, (_, i) => i));
});
