/**
 * Re-assembles a module from its original sections and replacement payloads,
 * keeping the canonical section order, then validates the result.
 *
 * @module
 */

import { HookboxError } from "../../core/errors.ts";
import { SECTION } from "../decode/_module.ts";
import type { ParsedModule } from "../decode/_parse.ts";
import { Writer } from "./_writer.ts";
import { COMPILATION_PRIORITY } from "../_hints.ts";

/** Canonical order of known sections (custom sections stay where they were). */
const ORDER: number[] = [
  SECTION.type,
  SECTION.import,
  SECTION.function,
  SECTION.table,
  SECTION.memory,
  SECTION.tag,
  SECTION.global,
  SECTION.export,
  SECTION.start,
  SECTION.element,
  SECTION.dataCount,
  SECTION.code,
  SECTION.data,
];

/**
 * Writes the module: original sections, replaced by `payloads` where given,
 * with new sections inserted at their canonical place. Custom sections whose
 * indices or code offsets went stale (`name`, DWARF, the code-metadata
 * sections such as branch hints) are dropped when `dropDebug` is set.
 * Compilation hints are always dropped from where they were; `hints` (a
 * custom section's payload, name included) is written just before the code
 * section, where V8 reads it.
 */
export function assemble(
  m: ParsedModule,
  payloads: Map<number, Uint8Array>,
  dropDebug: boolean,
  hints: Uint8Array | null = null,
): Uint8Array<ArrayBuffer> {
  const w = new Writer().bytes(m.bytes.subarray(0, 8));
  const pending = new Set(payloads.keys());
  const emit = (id: number, payload: Uint8Array) => w.u8(id).sized(payload);
  const emitNewBefore = (rank: number) => {
    for (const id of ORDER.slice(0, rank)) {
      if (pending.delete(id)) emit(id, payloads.get(id)!);
    }
  };
  for (const s of m.sections) {
    if (s.id === SECTION.custom) {
      const stale = s.customName === "name" || s.customName?.startsWith(".debug") ||
        s.customName?.startsWith("metadata.code.");
      if (s.customName === COMPILATION_PRIORITY || (dropDebug && stale)) continue;
      emit(0, m.bytes.subarray(s.start, s.end));
      continue;
    }
    emitNewBefore(ORDER.indexOf(s.id));
    pending.delete(s.id);
    if (s.id === SECTION.code && hints !== null) emit(0, hints);
    emit(s.id, payloads.get(s.id) ?? m.bytes.subarray(s.start, s.end));
  }
  emitNewBefore(ORDER.length);
  return w.finish();
}

/**
 * Throws unless `out` validates; blames the input when that is invalid too,
 * and the input's size when it sits at one of the engine's limits that the
 * metering's few additions (a global, locals, a function, an export) push
 * it over: 50,000 locals in a function, a million globals, and so on.
 */
export function checkValid(input: Uint8Array, out: Uint8Array<ArrayBuffer>): void {
  if (typeof WebAssembly === "undefined" || WebAssembly.validate(out)) return;
  if (!WebAssembly.validate(input as Uint8Array<ArrayBuffer>)) {
    throw new HookboxError("PLUGIN_INVALID", "module does not validate as WebAssembly");
  }
  const limit = engineLimit(out);
  if (limit !== null) {
    throw new HookboxError(
      "LIMIT_MODULE",
      `the module is at a limit of WebAssembly engines that metering takes it past (${limit}); ` +
        "make it smaller there",
    );
  }
  throw new HookboxError("INTERNAL", "instrumentation produced an invalid module");
}

/** The engine's words for the limit `out` breaks, or null when it breaks none (then it is ours). */
function engineLimit(out: Uint8Array<ArrayBuffer>): string | null {
  try {
    // Only on this failure path: compiling tells what validation does not.
    new WebAssembly.Module(out);
    return null;
  } catch (err) {
    const message = String((err as Error)?.message ?? err).replace(
      /^WebAssembly\.Module\(\): /,
      "",
    );
    return /exceeds internal limit|too large|maximum|too many/i.test(message)
      ? message.slice(0, 200)
      : null;
  }
}
