/**
 * Section rewriters: each takes a section payload reader and returns the new
 * payload, renumbering function indices and appending new entries.
 *
 * @module
 */

import {
  type CodeContext,
  type FuncShape,
  remapFunc,
  rewriteBody,
  rewriteConstExpr,
} from "../instrument/_code.ts";
import { readGlobalType } from "../decode/_parse.ts";
import { invalid, type Reader } from "../decode/_reader.ts";
import { readLimits, readTableType, readValType } from "../decode/_module.ts";
import { Writer } from "./_writer.ts";
import { Emitter } from "./_emitter.ts";

/** Copies the bytes `r` consumes while `read` runs. */
function copyRead(r: Reader, w: Writer, read: (r: Reader) => unknown): void {
  const start = r.pos;
  read(r);
  w.bytes(r.bytes.subarray(start, r.pos));
}

/** Re-emits a vector section: original entries (via `entry`) then `extra` raw entries. */
export function rewriteVec(
  r: Reader,
  entry: (r: Reader, w: Writer) => void,
  extra: Uint8Array[] = [],
): Uint8Array {
  const body = new Writer();
  const count = r.u32();
  for (let i = 0; i < count; i++) entry(r, body);
  if (!r.done) invalid("trailing bytes in section", r.pos);
  const out = new Writer().u32(count + extra.length).bytes(body.finish());
  for (const e of extra) out.bytes(e);
  return out.finish();
}

/** Builds a vector section payload from raw entries only. */
export function newVec(entries: Uint8Array[]): Uint8Array {
  const out = new Writer().u32(entries.length);
  for (const e of entries) out.bytes(e);
  return out.finish();
}

/** Copies an import entry unchanged. */
export function copyImport(r: Reader, w: Writer): void {
  copyRead(r, w, (r) => {
    r.name();
    r.name();
    const kind = r.u8();
    if (kind === 0) r.u32();
    else if (kind === 1) readTableType(r);
    else if (kind === 2) readLimits(r);
    else if (kind === 3) readGlobalType(r);
    else if (kind === 4) void (r.u8(), r.u32());
    else invalid(`unknown import kind ${kind}`, r.pos - 1);
  });
}

/** Global entry: type copied, init expression renumbered. */
export function globalEntry(ctx: CodeContext): (r: Reader, w: Writer) => void {
  return (r, w) => {
    copyRead(r, w, readGlobalType);
    rewriteConstExpr(r, w, ctx);
  };
}

/**
 * Table entry: plain table type, or `0x40 0x00 type init-expr`; the limits
 * are rewritten with the table's capped maximum (`maxima`, in table order),
 * the init expression renumbered.
 */
export function tableEntry(
  ctx: CodeContext,
  maxima: readonly number[],
): (r: Reader, w: Writer) => void {
  let index = 0;
  return (r, w) => {
    const withInit = r.bytes[r.pos] === 0x40;
    if (withInit) copyRead(r, w, (r) => (r.u8(), r.u8()));
    w.u8(readValType(r));
    const limits = readLimits(r);
    const max = maxima[index++];
    if (max === undefined) invalid("more tables than declared", r.pos);
    w.u8(limits.flags | 1).u32(limits.min).u32(max);
    if (withInit) rewriteConstExpr(r, w, ctx);
  };
}

/** Export entry with its function index renumbered. */
export function exportEntry(ctx: CodeContext): (r: Reader, w: Writer) => void {
  return (r, w) => {
    copyRead(r, w, (r) => (r.name(), r.u8()));
    const kind = r.bytes[r.pos - 1];
    const index = r.u32();
    w.u32(kind === 0 ? remapFunc(ctx, index) : index);
  };
}

/** Element segment (all eight encodings) with function indices renumbered. */
export function elementEntry(ctx: CodeContext): (r: Reader, w: Writer) => void {
  return (r, w) => {
    const at = r.pos;
    const flags = r.u32();
    if (flags > 7) invalid(`bad element segment flags ${flags}`, at);
    w.u32(flags);
    if ((flags & 3) === 2) w.u32(r.u32()); // table index
    if ((flags & 1) === 0) rewriteConstExpr(r, w, ctx); // offset
    if ((flags & 3) !== 0) w.u8(r.u8()); // elemkind or reftype
    const count = r.u32();
    w.u32(count);
    for (let i = 0; i < count; i++) {
      if (flags & 4) rewriteConstExpr(r, w, ctx);
      else w.u32(remapFunc(ctx, r.u32()));
    }
  };
}

/** Function body entry: size-prefixed body rewritten by {@linkcode rewriteBody}. */
export function codeEntry(
  ctx: CodeContext,
  shapeOf: (defined: number) => FuncShape,
): (r: Reader, w: Writer) => void {
  let defined = 0;
  return (r, w) => {
    const body = r.sub(r.u32());
    const out = new Emitter();
    rewriteBody(body, out, ctx, shapeOf(defined++));
    w.sized(out.finish());
  };
}

/** Copies a function type entry unchanged. */
export function copyType(r: Reader, w: Writer): void {
  copyRead(r, w, (r) => readTypes1(r));
}

function readTypes1(r: Reader): void {
  const at = r.pos;
  if (r.u8() !== 0x60) invalid("unsupported type form", at);
  for (let k = 0; k < 2; k++) {
    for (let n = r.u32(); n > 0; n--) readValType(r);
  }
}
