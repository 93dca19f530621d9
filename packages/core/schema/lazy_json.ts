/**
 * JSON values handed from one thread to another with their big parts as
 * text, parsed only where and when they are read. A thread that answers every
 * tenant cannot afford to parse (or receive through the structured clone,
 * which costs about as much) an event of a megabyte of small keys; it needs
 * its few top-level fields, while its hooks get the event as text anyway.
 *
 * {@linkcode packLazy} (on the thread that parsed the value) keeps small
 * parts as they are, up to {@linkcode INLINE_MAX_NODES} values in all, and
 * turns each big subtree (and every one past that budget) into its JSON text;
 * {@linkcode unpackLazy} (on the receiving thread) puts each such subtree
 * back as an accessor that parses its text the first time it is read and
 * then becomes a plain data property. Nothing that reads the value can tell
 * the difference — a spread, `JSON.stringify`, a validator, the structured
 * clone all read through the accessor — except in when the parse happens.
 * Two places that held the same big object hold one object again.
 *
 * @module
 */
import { concatBytes } from "../bytes.ts";

/** A subtree of more values than this travels as text. */
export const LAZY_MIN_NODES = 1024;
/**
 * A big object of at most this many keys is opened (its small fields travel
 * as they are, its big ones as text); a wider one travels as text whole.
 */
export const OPEN_MAX_KEYS = 1024;

/**
 * Most values that travel as values in all: past it, every further object
 * or array travels as text, however small. Without it, an event of a hundred
 * fields of a thousand values each would travel whole, each field being
 * small on its own.
 */
export const INLINE_MAX_NODES = 4096;

/** A value packed by {@linkcode packLazy}. Structured-clone safe. */
export interface LazyPack {
  /** The value, with `null` where each big subtree was. */
  tree: unknown;
  /** Where each big subtree goes: its path of keys from the root. */
  paths: string[][];
  /** Which text each path takes (paths that held one object share one). */
  cells: number[];
  /** The JSON text of each big subtree. */
  texts: string[];
}

/**
 * Packs a JSON value (objects, arrays, strings, numbers, booleans, null, as
 * `JSON.parse` makes them): see the module doc. The root is always opened
 * when it is an object of at most {@linkcode OPEN_MAX_KEYS} keys.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { packLazy, unpackLazy } from "./lazy_json.ts";
 * const big = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]));
 * const pack = packLazy({ tool_name: "Bash", tool_input: big });
 * assert.deepEqual(pack.paths, [["tool_input"]]);
 * const value = unpackLazy(pack) as { tool_name: string; tool_input: unknown };
 * assert.equal(value.tool_name, "Bash");
 * assert.deepEqual(value.tool_input, big);
 * ```
 */
export function packLazy(value: unknown): LazyPack {
  const pack: LazyPack = { tree: null, paths: [], cells: [], texts: [] };
  const cellOf = new Map<object, number>();
  // Listing the keys of an object of 70,000 costs as much as writing it as text: once each.
  const keyLists = new Map<object, string[]>();
  const keysOf = (v: object) => {
    let keys = keyLists.get(v);
    if (keys === undefined) keyLists.set(v, keys = Object.keys(v));
    return keys;
  };
  let budget = INLINE_MAX_NODES;
  const walk = (v: unknown, path: string[]): unknown => {
    if (typeof v !== "object" || v === null) {
      budget--;
      return v;
    }
    let cell = cellOf.get(v);
    if (cell === undefined) {
      const nodes = countNodes(v, LAZY_MIN_NODES, keysOf);
      if (nodes <= LAZY_MIN_NODES && nodes <= budget) {
        budget -= nodes;
        return v;
      }
      const root = path.length === 0;
      // Opened only when its fields fit what is left (the root always: its fields are read).
      const keys = Array.isArray(v) ? null : keysOf(v).length;
      if (keys !== null && keys <= OPEN_MAX_KEYS && (root || keys < budget)) {
        budget--;
        const out: Record<string, unknown> = {};
        for (const key of keysOf(v)) {
          // Defined, not assigned: a `__proto__` key stays a key.
          Object.defineProperty(out, key, {
            value: walk((v as Record<string, unknown>)[key], [...path, key]),
            writable: true,
            enumerable: true,
            configurable: true,
          });
        }
        return out;
      }
      cell = pack.texts.push(JSON.stringify(v)) - 1;
      cellOf.set(v, cell);
    }
    pack.paths.push(path);
    pack.cells.push(cell);
    return null;
  };
  pack.tree = walk(value, []);
  return pack;
}

/** Objects that hold an unread big part, or did (see {@linkcode holdsLazy}). */
const HOLDERS = new WeakSet<object>();

/** Set while {@linkcode stringifyLazy} runs: unread parts answer a token and are spliced in. */
let splicing: Splice | null = null;

/** The parts one {@linkcode stringifyLazy} or {@linkcode lazyJsonPieces} splices in. */
interface Splice {
  /** Made when the first part is met: a stringify that meets none costs no random bytes. */
  nonce: string | null;
  texts: (string | Uint8Array)[];
}

/** The tokens of `nonce` in JSON text (each a JSON string of a nonce no data can know). */
function tokenPattern(nonce: string): RegExp {
  return new RegExp(`"\\\\u0000${nonce}:(\\d+)\\\\u0000"`, "g");
}

/** The token that stands for `part` in the splice under way. */
function spliceToken(splice: Splice, part: string | Uint8Array): string {
  splice.nonce ??= crypto.randomUUID();
  splice.texts.push(part);
  return `\u0000${splice.nonce}:${splice.texts.length - 1}\u0000`;
}

/** The value of a {@linkcode LazyPack}: see the module doc. */
export function unpackLazy(pack: LazyPack): unknown {
  const cells = pack.texts.map((text) => ({ text, parsed: false, value: undefined as unknown }));
  const read = (index: number) => {
    const cell = cells[index]!;
    if (!cell.parsed) {
      cell.value = JSON.parse(cell.text);
      cell.parsed = true;
      cell.text = "";
    }
    return cell.value;
  };
  // The object it is read through (a copy made by `copyLazy` too) gets the value.
  const settle = (holder: object, key: string, value: unknown) =>
    Object.defineProperty(holder, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  let root = pack.tree;
  pack.paths.forEach((path, i) => {
    const index = pack.cells[i]!;
    if (path.length === 0) {
      root = read(index);
      return;
    }
    let parent = root as Record<string, unknown>;
    HOLDERS.add(parent);
    for (const key of path.slice(0, -1)) {
      parent = parent[key] as Record<string, unknown>;
      HOLDERS.add(parent);
    }
    const key = path[path.length - 1]!;
    const getter = function (this: object) {
      const cell = cells[index]!;
      if (splicing !== null && !cell.parsed) {
        return spliceToken(splicing, cell.text);
      }
      const value = read(index);
      settle(this, key, value);
      return value;
    };
    READERS.set(getter, ++readers);
    Object.defineProperty(parent, key, {
      get: getter,
      set(this: object, value: unknown) {
        settle(this, key, value);
      },
      enumerable: true,
      configurable: true,
    });
  });
  return root;
}

/** A number for each reader of a part (see {@linkcode unreadToken}). */
const READERS = new WeakMap<object, number>();
let readers = 0;

/**
 * A name for the part at `holder[key]` while it is unread (the same in every
 * copy of `holder`), or null when it is read or not such a part; the part is
 * not read.
 */
export function unreadToken(holder: object, key: string): string | null {
  const get = Object.getOwnPropertyDescriptor(holder, key)?.get;
  if (get === undefined || !READERS.has(get)) return null;
  return `lazy:${READERS.get(get)}`;
}

/**
 * True when `value` is an object {@linkcode unpackLazy} made that holds (or
 * held) a part still as text, or a {@linkcode copyLazy} of one.
 */
export function holdsLazy(value: unknown): boolean {
  return typeof value === "object" && value !== null && HOLDERS.has(value);
}

/**
 * A shallow copy of `source` that keeps its unread parts unread (a spread
 * reads, so parses, each of them); a plain spread for any other object.
 * Assigning a field of the copy changes the copy only.
 */
export function copyLazy<T extends object>(source: T): T {
  if (!HOLDERS.has(source)) return { ...source };
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(source)) as T;
  HOLDERS.add(copy);
  return copy;
}

/**
 * `JSON.stringify(value)`, with each part of it still unread (see
 * {@linkcode unpackLazy}) written as its text instead of parsed and written
 * again: the same text, at the cost of copying it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { packLazy, stringifyLazy, unpackLazy } from "./lazy_json.ts";
 * const big = Array.from({ length: 2000 }, (_, i) => i);
 * const value = unpackLazy(packLazy({ tool_input: { list: big } }));
 * assert.equal(stringifyLazy({ answer: value }), JSON.stringify({ answer: { tool_input: { list: big } } }));
 * ```
 */
export function stringifyLazy(value: unknown): string {
  const { text, parts, token } = spliced(value);
  if (token === null) return text;
  const decoder = new TextDecoder();
  return text.replace(token, (_, i: string) => {
    const part = parts[Number(i)]!;
    return typeof part === "string" ? part : decoder.decode(part);
  });
}

/**
 * `JSON.stringify(value)` with a token in place of each unread part, the
 * parts in token order, and the pattern that finds the tokens (null when
 * there are none).
 */
function spliced(value: unknown): { text: string; parts: Splice["texts"]; token: RegExp | null } {
  const outer = splicing;
  const own: Splice = { nonce: null, texts: [] };
  splicing = own;
  let text: string;
  try {
    text = JSON.stringify(value);
  } finally {
    splicing = outer;
  }
  // Each token is a JSON string of a nonce no data can know: nothing else matches.
  const token = own.nonce === null ? null : tokenPattern(own.nonce);
  return { text, parts: own.texts, token };
}

/** The values `value` holds in all (itself included); `max + 1` once there are more than `max`. */
function countNodes(value: object, max: number, keysOf: (v: object) => string[]): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (++count > max) return max + 1;
    if (typeof v !== "object" || v === null) continue;
    if (Array.isArray(v)) {
      if (count + stack.length + v.length > max) return max + 1;
      for (const item of v) stack.push(item);
    } else {
      const keys = keysOf(v);
      if (count + stack.length + keys.length > max) return max + 1;
      for (const key of keys) stack.push((v as Record<string, unknown>)[key]);
    }
  }
  return count;
}

/** A hook's printed text of at least this many characters crosses threads as bytes. */
export const BIG_TEXT_CHARS = 64 * 1024;

/** A big text of a chain's result, as {@linkcode packBigTexts} sends it. */
export interface BigText {
  /** Which result (of the chains), which hook record, which field. */
  at: [number, number, "stdout" | "stderr"];
  /** The text as a JSON string literal, UTF-8. */
  json: Uint8Array;
  /** Its length in characters. */
  length: number;
}

/** The text fields of a hook record this layer packs. */
interface Printed {
  stdout: string;
  stderr: string;
}

const PRINTED = ["stdout", "stderr"] as const;
const ENCODER = new TextEncoder();

/**
 * Takes each hook's stdout and stderr of {@linkcode BIG_TEXT_CHARS} or more
 * out of `results` (on the thread that ran the hooks) and returns them as
 * JSON string literals in UTF-8, with the buffers to transfer: a megabyte
 * of hook output then crosses to the thread that answers every tenant
 * without a copy, and is written into an answer there without being decoded
 * or escaped again ({@linkcode unpackBigTexts}, {@linkcode lazyJsonPieces}).
 */
export function packBigTexts(
  results: readonly { hooks: readonly Printed[] }[],
): { texts: BigText[]; transfer: ArrayBuffer[] } {
  const texts: BigText[] = [];
  for (let r = 0; r < results.length; r++) {
    const hooks = results[r]!.hooks;
    for (let h = 0; h < hooks.length; h++) {
      const record = hooks[h]!;
      for (const field of PRINTED) {
        const text = record[field];
        if (text.length < BIG_TEXT_CHARS) continue;
        texts.push({
          at: [r, h, field],
          json: ENCODER.encode(JSON.stringify(text)),
          length: text.length,
        });
        (record as Printed)[field] = "";
      }
    }
  }
  return { texts, transfer: texts.map((t) => t.json.buffer as ArrayBuffer) };
}

/** The big texts still unread on this thread, by the accessor that reads each. */
const BIG_TEXTS = new WeakMap<object, BigText>();
/** The hook records that got one (the others are looked at no further). */
const BIG_RECORDS = new WeakSet<object>();

/**
 * Puts each text of {@linkcode packBigTexts} back into `results` as an
 * accessor that decodes it on first read; its length is known without a
 * read ({@linkcode printedLength}).
 */
export function unpackBigTexts(
  results: readonly { hooks: readonly Printed[] }[],
  texts: readonly BigText[],
): void {
  for (const text of texts) {
    const [r, h, field] = text.at;
    const record = results[r]?.hooks[h];
    if (record === undefined) continue;
    const getter = function (this: object) {
      if (splicing !== null) {
        return spliceToken(splicing, text.json);
      }
      const value = JSON.parse(new TextDecoder().decode(text.json)) as string;
      Object.defineProperty(this, field, {
        value,
        writable: true,
        enumerable: true,
        configurable: true,
      });
      return value;
    };
    BIG_TEXTS.set(getter, text);
    BIG_RECORDS.add(record);
    Object.defineProperty(record, field, {
      get: getter,
      set(this: object, value: unknown) {
        Object.defineProperty(this, field, {
          value,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      },
      enumerable: true,
      configurable: true,
    });
  }
}

/** `record[field].length`, without decoding a big text that is still unread. */
export function printedLength(record: Printed, field: "stdout" | "stderr"): number {
  if (!BIG_RECORDS.has(record)) return record[field].length;
  const get = Object.getOwnPropertyDescriptor(record, field)?.get;
  const big = get === undefined ? undefined : BIG_TEXTS.get(get);
  return big?.length ?? record[field].length;
}

/** The characters of the hooks' big texts in `results` still unread (0: none; see {@linkcode lazyJsonPieces}). */
export function unreadBigChars(results: readonly { hooks: readonly Printed[] }[]): number {
  let chars = 0;
  for (const result of results) {
    for (const record of result.hooks) {
      if (!BIG_RECORDS.has(record)) continue;
      for (const field of PRINTED) {
        const get = Object.getOwnPropertyDescriptor(record, field)?.get;
        chars += (get === undefined ? undefined : BIG_TEXTS.get(get))?.length ?? 0;
      }
    }
  }
  return chars;
}

/**
 * `value` as JSON in UTF-8, as `new TextEncoder().encode(stringifyLazy(value))`
 * gives it, in pieces: each big text still unread is a piece of its own, the
 * bytes it came as, never copied (an answer of megabytes of hook output is
 * written out piece by piece).
 */
export function lazyJsonPieces(value: unknown): Uint8Array[] {
  const { text, parts, token } = spliced(value);
  return splicedPieces(text, parts, token);
}

/** `text` as UTF-8 pieces with each token's part in its place (bytes as they are). */
function splicedPieces(text: string, parts: Splice["texts"], token: RegExp | null): Uint8Array[] {
  if (token === null) return [ENCODER.encode(text)];
  const pieces: Uint8Array[] = [];
  let at = 0;
  for (const match of text.matchAll(token)) {
    pieces.push(ENCODER.encode(text.slice(at, match.index)));
    const part = parts[Number(match[1])]!;
    pieces.push(typeof part === "string" ? ENCODER.encode(part) : part);
    at = match.index + match[0].length;
  }
  pieces.push(ENCODER.encode(text.slice(at)));
  return pieces;
}

/** `pieces` as one array (the one itself when there is one). */
function joined(pieces: Uint8Array[]): Uint8Array {
  return pieces.length === 1 ? pieces[0]! : concatBytes(pieces, piecesLength(pieces));
}

/** The bytes of `pieces` together. */
export function piecesLength(pieces: readonly Uint8Array[]): number {
  let length = 0;
  for (const piece of pieces) length += piece.byteLength;
  return length;
}

/** A value to write as JSON on another thread: see {@linkcode tokenizedClone}. */
export interface TokenizedValue {
  /** The clone, each unread part a token. */
  value: unknown;
  /** The parts, in token order: JSON text, or JSON bytes. */
  parts: (string | Uint8Array)[];
  /** What the tokens carry (null: none). */
  nonce: string | null;
}

/**
 * A copy of the JSON value `value` (its objects and arrays; strings are
 * shared, not copied) with each unread part (a big part of an event, a
 * hook's big output) a token and the part beside it, as it is: sent to
 * another thread to be written as JSON ({@linkcode tokenizedJsonBytes}), it
 * is never parsed here first, as the value itself would be (the structured
 * clone reads every accessor).
 */
export function tokenizedClone(value: unknown): TokenizedValue {
  const outer = splicing;
  const own: Splice = { nonce: null, texts: [] };
  splicing = own;
  let copy: unknown;
  try {
    copy = jsonCopy(value);
  } finally {
    splicing = outer;
  }
  return { value: copy, parts: own.texts, nonce: own.nonce };
}

/** Objects and arrays of a JSON value copied, read through their accessors. */
function jsonCopy(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(jsonCopy);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    out[key] = jsonCopy((value as Record<string, unknown>)[key]);
  }
  return out;
}

/** The JSON bytes of a {@linkcode tokenizedClone}'s value, each part spliced in. */
export function tokenizedJsonBytes(tokenized: TokenizedValue): Uint8Array {
  const text = JSON.stringify(tokenized.value);
  const token = tokenized.nonce === null ? null : tokenPattern(tokenized.nonce);
  return joined(splicedPieces(text, tokenized.parts, token));
}
