/**
 * A generator of random, valid, always-terminating WebAssembly modules (as
 * WAT text) for differential testing of the rewriter.
 *
 * The program is drawn from a stream of choices (fast-check's integer arrays),
 * so fast-check can shrink a failing module by shortening the stream or
 * lowering its numbers: a choice past the end reads 0, the simplest option.
 *
 * Every module has the same outline: one memory (1 page, max 4) exported as
 * `memory`, two mutable i32 globals exported as `g0`/`g1`, a tag `e` (i32),
 * a funcref table holding every function, some data, and functions
 * `(param i32 i32) (result i32)` that call only functions defined before them
 * (directly or through the table), so there is no recursion. Loops run at
 * most 7 times on a counter the body cannot touch. The export `run` calls the
 * last function. What the body does is random: arithmetic that can trap
 * (division by zero, overflow), loads and stores in and out of bounds,
 * `memory.grow`/`size`/`fill`/`copy`, globals, `select`, blocks with and
 * without results, `br`/`br_if`/`br_table`, `return`, `throw`, `try_table`
 * with `catch`/`catch_all`, and rarely `unreachable`.
 *
 * @module
 */
import fc from "fast-check";

/** The choice streams modules are drawn from. */
export function moduleStream(): fc.Arbitrary<number[]> {
  return fc.array(fc.nat(), { minLength: 20, maxLength: 1500, size: "max" });
}

/** Reads choices from a stream; past its end every choice is 0. */
class Choices {
  #at = 0;
  constructor(private readonly stream: readonly number[]) {}
  /** A choice in [0, n). */
  pick(n: number): number {
    const v = this.stream[this.#at++] ?? 0;
    return v % n;
  }
  /** True with probability about 1/n. */
  rarely(n: number): boolean {
    return this.pick(n) === n - 1;
  }
}

const BINOPS = [
  "add",
  "sub",
  "mul",
  "and",
  "or",
  "xor",
  "shl",
  "shr_s",
  "shr_u",
  "rotl",
  "eq",
  "ne",
  "lt_s",
  "gt_u",
  "le_s",
  "ge_u",
  "div_s",
  "div_u",
  "rem_s",
  "rem_u",
];
const UNOPS = ["eqz", "clz", "ctz", "popcnt", "extend8_s"];
const LOADS = ["i32.load", "i32.load8_u", "i32.load8_s", "i32.load16_u", "i32.load16_s"];
const STORES = ["i32.store", "i32.store8", "i32.store16"];
const CONSTS = [0, 1, 2, 3, 7, 8, 15, 16, 255, 4096, 65535, 65536, -1, -2147483648, 2147483647];

interface Label {
  name: string;
  /** A label's branch carries an i32 (an expression block) or nothing. */
  carries: boolean;
}

interface FnState {
  index: number;
  /** Locals the body may read and write (params and plain locals). */
  locals: number;
  /** Loop counters, allocated past the plain locals. */
  counters: number;
  labels: Label[];
  nextLabel: number;
}

const PARAMS = 2;
const PLAIN_LOCALS = 3;
const MAX_FUNCS = 5;

/** Generates one module from `stream`. */
export function generateModule(stream: readonly number[]): string {
  const c = new Choices(stream);
  const count = 1 + c.pick(MAX_FUNCS);
  const funcs: string[] = [];
  for (let i = 0; i < count; i++) funcs.push(generateFunction(c, i));
  const elems = Array.from({ length: count }, (_, i) => `$f${i}`).join(" ");
  const g0 = CONSTS[c.pick(CONSTS.length)];
  const g1 = CONSTS[c.pick(CONSTS.length)];
  // More data after the fixed segment, a few bytes or more than the rewriter's
  // join distance apart, sometimes one written back over earlier bytes.
  const data: string[] = [];
  let at = 24;
  for (let n = c.pick(6); n > 0; n--) {
    at += [0, 5, 70][c.pick(3)]!;
    const over = c.pick(5) === 0;
    const bytes = Array.from({ length: 1 + c.pick(4) }, () => c.pick(256));
    const text = bytes.map((b) => `\\${b.toString(16).padStart(2, "0")}`).join("");
    data.push(`  (data (i32.const ${over ? 18 : at}) "${text}")`);
    if (!over) at += bytes.length;
  }
  return [
    "(module",
    "  (type $t (func (param i32 i32) (result i32)))",
    '  (tag $e (export "e") (param i32))',
    '  (memory (export "memory") 1 4)',
    `  (global $g0 (export "g0") (mut i32) (i32.const ${g0}))`,
    `  (global $g1 (export "g1") (mut i32) (i32.const ${g1}))`,
    `  (table ${count} funcref)`,
    `  (elem (i32.const 0) func ${elems})`,
    '  (data (i32.const 16) "hookbox\\01\\02\\03\\ff")',
    ...data,
    ...funcs,
    `  (func (export "run") (param i32 i32) (result i32)`,
    `    (call $f${count - 1} (local.get 0) (local.get 1)))`,
    ")",
  ].join("\n");
}

function generateFunction(c: Choices, index: number): string {
  const fn: FnState = {
    index,
    locals: PARAMS + PLAIN_LOCALS,
    counters: 0,
    labels: [],
    nextLabel: 0,
  };
  const body = statements(c, fn, 3);
  const result = expr(c, fn, 3);
  const counters = fn.counters > 0 ? ` (local ${"i32 ".repeat(fn.counters).trim()})` : "";
  return [
    `  (func $f${index} (type $t) (local i32 i32 i32)${counters}`,
    ...body.map((s) => `    ${s}`),
    `    ${result})`,
  ].join("\n");
}

function statements(c: Choices, fn: FnState, depth: number): string[] {
  const n = c.pick(depth > 0 ? 5 : 3);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(statement(c, fn, depth));
  return out;
}

function label(fn: FnState, carries: boolean): Label {
  return { name: `$l${fn.nextLabel++}`, carries };
}

function statement(c: Choices, fn: FnState, depth: number): string {
  const d = depth - 1;
  switch (c.pick(depth > 0 ? 17 : 9)) {
    case 0:
      return `(local.set ${c.pick(fn.locals)} ${expr(c, fn, 2)})`;
    case 1:
      return `(global.set $g${c.pick(2)} ${expr(c, fn, 2)})`;
    case 2:
      return `(${STORES[c.pick(STORES.length)]} offset=${c.pick(3) * 4} ${address(c, fn)} ${
        expr(c, fn, 2)
      })`;
    case 3:
      return `(drop ${expr(c, fn, 2)})`;
    case 4:
      return `(memory.fill ${address(c, fn)} ${expr(c, fn, 1)} ${length(c, fn)})`;
    case 5:
      return `(memory.copy ${address(c, fn)} ${address(c, fn)} ${length(c, fn)})`;
    case 6:
      return branch(c, fn) ?? `(drop (memory.grow (i32.and ${expr(c, fn, 1)} (i32.const 1))))`;
    case 7:
      return c.rarely(4) ? `(return ${expr(c, fn, 2)})` : `(drop (memory.size))`;
    case 8:
      return c.rarely(8) ? "(unreachable)" : `(throw $e ${expr(c, fn, 1)})`;
    case 9:
    case 10: {
      const l = label(fn, false);
      fn.labels.push(l);
      const body = statements(c, fn, d);
      fn.labels.pop();
      return `(block ${l.name} ${body.join(" ")})`;
    }
    case 11:
      return `(if ${expr(c, fn, 2)} (then ${statements(c, fn, d).join(" ")}) (else ${
        statements(c, fn, d).join(" ")
      }))`;
    case 12:
    case 13:
      return loop(c, fn, d);
    case 14: {
      const handler = label(fn, false);
      fn.labels.push(handler);
      const inner = label(fn, false);
      fn.labels.push(inner);
      const body = statements(c, fn, d);
      fn.labels.pop();
      fn.labels.pop();
      return `(block ${handler.name} (try_table ${inner.name} (catch_all ${handler.name}) ${
        body.join(" ")
      }))`;
    }
    case 15: {
      const handler = label(fn, true);
      fn.labels.push(handler);
      const body = statements(c, fn, d);
      fn.labels.pop();
      const target = c.pick(fn.locals);
      return `(local.set ${target} (block ${handler.name} (result i32) (try_table (catch $e ${handler.name}) ${
        body.join(" ")
      }) (i32.const -7)))`;
    }
    default: {
      const args = `${expr(c, fn, 1)} ${expr(c, fn, 1)}`;
      return fn.index === 0
        ? `(drop (i32.add ${args}))`
        : `(drop (call $f${c.pick(fn.index)} ${args}))`;
    }
  }
}

/** A loop of at most 7 rounds on a fresh counter the body never touches. */
function loop(c: Choices, fn: FnState, depth: number): string {
  const counter = PARAMS + PLAIN_LOCALS + fn.counters++;
  const exit = label(fn, false);
  const head = `$h${fn.nextLabel++}`;
  fn.labels.push(exit);
  const body = statements(c, fn, depth);
  fn.labels.pop();
  return [
    `(local.set ${counter} (i32.and ${expr(c, fn, 1)} (i32.const 7)))`,
    `(block ${exit.name} (loop ${head}`,
    `(br_if ${exit.name} (i32.eqz (local.get ${counter})))`,
    `(local.set ${counter} (i32.sub (local.get ${counter}) (i32.const 1)))`,
    ...body,
    `(br ${head})))`,
  ].join(" ");
}

/** A `br`, `br_if` or `br_table` to enclosing labels, or null when none fits. */
function branch(c: Choices, fn: FnState): string | null {
  const voids = fn.labels.filter((l) => !l.carries);
  if (voids.length === 0 || c.rarely(3)) return null;
  const target = voids[c.pick(voids.length)]!.name;
  switch (c.pick(3)) {
    case 0:
      return `(br_if ${target} ${expr(c, fn, 1)})`;
    case 1: {
      const others = Array.from({ length: 1 + c.pick(3) }, () => voids[c.pick(voids.length)]!.name);
      return `(br_table ${others.join(" ")} ${target} ${expr(c, fn, 1)})`;
    }
    default:
      return `(if ${expr(c, fn, 1)} (then (br ${target})))`;
  }
}

/** An address: mostly masked into the first page, sometimes anything. */
function address(c: Choices, fn: FnState): string {
  const e = expr(c, fn, 1);
  return c.rarely(6) ? e : `(i32.and ${e} (i32.const 0xfff0))`;
}

/** A bulk length: mostly small, sometimes a page or anything. */
function length(c: Choices, fn: FnState): string {
  const e = expr(c, fn, 1);
  switch (c.pick(8)) {
    case 0:
      return e;
    case 1:
      return `(i32.const 65536)`;
    default:
      return `(i32.and ${e} (i32.const 0x3ff))`;
  }
}

function expr(c: Choices, fn: FnState, depth: number): string {
  if (depth <= 0) return leaf(c, fn);
  const d = depth - 1;
  switch (c.pick(14)) {
    case 0:
    case 1:
    case 2:
      return leaf(c, fn);
    case 3:
    case 4:
      return `(i32.${BINOPS[c.pick(BINOPS.length)]} ${expr(c, fn, d)} ${expr(c, fn, d)})`;
    case 5:
      return `(i32.${UNOPS[c.pick(UNOPS.length)]} ${expr(c, fn, d)})`;
    case 6:
      return `(${LOADS[c.pick(LOADS.length)]} offset=${c.pick(4)} ${address(c, fn)})`;
    case 7:
      return `(local.tee ${c.pick(fn.locals)} ${expr(c, fn, d)})`;
    case 8:
      return `(select ${expr(c, fn, d)} ${expr(c, fn, d)} ${expr(c, fn, d)})`;
    case 9:
      return `(if (result i32) ${expr(c, fn, d)} (then ${expr(c, fn, d)}) (else ${
        expr(c, fn, d)
      }))`;
    case 10: {
      const l = label(fn, true);
      fn.labels.push(l);
      const body = statements(c, fn, Math.min(d, 1));
      const early = c.rarely(2)
        ? `(drop (br_if ${l.name} ${expr(c, fn, d)} ${expr(c, fn, d)}))`
        : "";
      fn.labels.pop();
      return `(block ${l.name} (result i32) ${body.join(" ")} ${early} ${expr(c, fn, d)})`;
    }
    case 11:
      if (fn.index === 0) return leaf(c, fn);
      return `(call $f${c.pick(fn.index)} ${expr(c, fn, d)} ${expr(c, fn, d)})`;
    case 12: {
      if (fn.index === 0) return `(memory.grow (i32.and ${expr(c, fn, d)} (i32.const 1)))`;
      const slot = c.rarely(8)
        ? `(i32.const ${fn.index + 100})`
        : `(i32.rem_u ${expr(c, fn, d)} (i32.const ${fn.index}))`;
      return `(call_indirect (type $t) ${expr(c, fn, d)} ${expr(c, fn, d)} ${slot})`;
    }
    default:
      return `(global.get $g${c.pick(2)})`;
  }
}

function leaf(c: Choices, fn: FnState): string {
  switch (c.pick(3)) {
    case 0:
      return `(i32.const ${CONSTS[c.pick(CONSTS.length)]})`;
    case 1:
      return `(local.get ${c.pick(fn.locals)})`;
    default:
      return c.rarely(4) ? "(memory.size)" : `(local.get ${c.pick(PARAMS)})`;
  }
}
