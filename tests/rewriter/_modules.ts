/** Hostile modules built from bytes: shapes at and past the limits of the rewriter and engines. */
import { leb } from "../integration/_plugins.ts";

/**
 * A valid module at one of the engine's limits that metering's additions
 * take it past, built from bytes: one function with 50,000 i32 locals, or
 * one function of 1.3 million empty loops (3.9 MB of body; metered, past the
 * engine's 7.6 MB for a function).
 */
export function atEngineLimit(what: "locals" | "body"): Uint8Array {
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const body = what === "locals" ? [1, ...leb(50_000), 0x7f, 0x0b] : [0];
  if (what === "body") {
    for (let i = 0; i < 1_300_000; i++) body.push(0x03, 0x40, 0x0b);
    body.push(0x0b);
  }
  return new Uint8Array([
    ...[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    ...section(1, [1, 0x60, 0, 0]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]),
    ...section(7, [1, 6, ...new TextEncoder().encode("_start"), 0, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}

/**
 * A valid module with `n` of one thing beside one exported `_start`: `n`
 * defined functions, `n` i32 globals, `n` exports (of `_start` under other
 * names), `n` imports (of WASI's `sched_yield`, a name plugins may import),
 * `n` element segments (each putting `_start` in a one-entry table) or `n`
 * exception tags.
 */
export function manyOf(
  what: "functions" | "globals" | "exports" | "imports" | "elements" | "tags",
  n: number,
): Uint8Array {
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const text = (s: string) => {
    const bytes = [...new TextEncoder().encode(s)];
    return [...leb(bytes.length), ...bytes];
  };
  const imports: number[] = [];
  if (what === "imports") {
    imports.push(...leb(n));
    for (let i = 0; i < n; i++) {
      imports.push(...text("wasi_snapshot_preview1"), ...text("sched_yield"), 0, 1);
    }
  }
  const start = what === "imports" ? n : 0; // the index of the defined `_start`
  const defined = what === "functions" ? n : 1;
  const globals: number[] = [];
  if (what === "globals") {
    globals.push(...leb(n));
    for (let i = 0; i < n; i++) globals.push(0x7f, 0, 0x41, 0, 0x0b);
  }
  const exportCount = what === "exports" ? n : 1;
  const exports: number[] = [...leb(exportCount), ...text("_start"), 0, ...leb(start)];
  for (let i = 1; i < exportCount; i++) exports.push(...text(`e${i}`), 0, ...leb(start));
  const code: number[] = [...leb(defined)];
  for (let i = 0; i < defined; i++) code.push(2, 0, 0x0b);
  const elements: number[] = [];
  if (what === "elements") {
    elements.push(...leb(n));
    for (let i = 0; i < n; i++) elements.push(0, 0x41, 0, 0x0b, 1, ...leb(start));
  }
  const tags: number[] = [];
  if (what === "tags") {
    tags.push(...leb(n));
    for (let i = 0; i < n; i++) tags.push(0, 0);
  }
  return new Uint8Array([
    ...[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    ...section(1, [2, 0x60, 0, 0, 0x60, 0, 1, 0x7f]),
    ...(imports.length > 0 ? section(2, imports) : []),
    ...section(3, [...leb(defined), ...new Array(defined).fill(0)]),
    ...(what === "elements" ? section(4, [1, 0x70, 0, 1]) : []),
    ...section(5, [1, 0, 1]),
    ...(tags.length > 0 ? section(13, tags) : []),
    ...(globals.length > 0 ? section(6, globals) : []),
    ...section(7, exports),
    ...(elements.length > 0 ? section(9, elements) : []),
    ...section(10, code),
  ]);
}

/**
 * A valid module of `n` function types no other module of another `seed` has
 * (14 parameters spelling seed and index in base 4), with an exported
 * `_start` of the first.
 */
export function manyTypes(seed: number, n: number): Uint8Array {
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const VALUES = [0x7f, 0x7e, 0x7d, 0x7c];
  const types: number[] = [...leb(n + 1), 0x60, 0, 0];
  for (let i = 0; i < n; i++) {
    let digits = seed * 1_000_000 + i;
    const params: number[] = [];
    for (let d = 0; d < 14; d++, digits = Math.floor(digits / 4)) params.push(VALUES[digits % 4]!);
    types.push(0x60, params.length, ...params, 0);
  }
  return new Uint8Array([
    ...[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    ...section(1, types),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, 1]),
    ...section(7, [
      2,
      6,
      ...new TextEncoder().encode("_start"),
      0,
      0,
      6,
      ...new TextEncoder().encode("memory"),
      2,
      0,
    ]),
    ...section(10, [1, 2, 0, 0x0b]),
  ]);
}
