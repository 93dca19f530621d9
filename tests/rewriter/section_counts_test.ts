/**
 * A section's entry count is refused before its entries are read. A module
 * of the 4 MiB a policy allows holds a million four-byte imports: read
 * whole, three times over (inspect, data split, instrument), each took about
 * 100 MB and 2 s of a hook call before the count was looked at; 800,000
 * five-byte data segments, which had no limit, were read and loaded.
 */
import assert from "node:assert/strict";
import { inspectModule, MAX_COUNTS, MAX_TABLES } from "../../packages/rewriter/mod.ts";
import { isHookboxError } from "../../packages/core/errors.ts";

const leb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>>= 7;
    if (n === 0) return [...out, byte];
    out.push(byte | 0x80);
  }
};
const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
/** A module whose section `id` says it holds `count` entries and holds `entry` once. */
const claims = (id: number, count: number, entry: number[]) =>
  new Uint8Array([
    ...[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    ...section(1, [1, 0x60, 0, 0]),
    ...section(id, [...leb(count), ...entry]),
  ]);

const MILLION = 1_000_000;
const CASES: [string, Uint8Array, string][] = [
  [
    "imports",
    claims(2, MILLION, [0, 0, 0, 0]),
    `${MILLION} imports, at most ${MAX_COUNTS.imports}`,
  ],
  ["functions", claims(3, MILLION, [0]), `${MILLION} functions, at most ${MAX_COUNTS.functions}`],
  ["tables", claims(4, MILLION, [0x70, 0, 1]), `${MILLION} tables, at most ${MAX_TABLES}`],
  [
    "globals",
    claims(6, MILLION, [0x7f, 0, 0x41, 0, 0x0b]),
    `${MILLION} globals, at most ${MAX_COUNTS.globals}`,
  ],
  [
    "exports",
    claims(7, MILLION, [1, 0x61, 0, 0]),
    `${MILLION} exports, at most ${MAX_COUNTS.exports}`,
  ],
  [
    "element segments",
    claims(9, MILLION, [0, 0x41, 0, 0x0b, 0]),
    `${MILLION} element segments, at most ${MAX_COUNTS.elements}`,
  ],
  [
    "data segments",
    claims(11, MILLION, [0, 0x41, 0, 0x0b, 0]),
    `${MILLION} data segments, at most ${MAX_COUNTS.data}`,
  ],
];

for (const [what, module, message] of CASES) {
  Deno.test(`a module claiming a million ${what} is refused from the count, before they are read`, () => {
    assert.throws(
      () => inspectModule(module),
      (e) => isHookboxError(e, "LIMIT_MODULE") && e.message.includes(message),
      what,
    );
  });
}
