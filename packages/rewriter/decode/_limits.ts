/**
 * What the rewriter refuses before it touches a module, so that neither the
 * host's own validation nor the rewrite can be driven into unbounded time or
 * memory, and nothing a hostile module declares can outlive the limits:
 *
 * - shared memories and `memory.atomic.wait32/64`: a guest has no threads to
 *   wake it, so a wait could only block the thread that runs it;
 * - 64-bit tables (their lengths are i64; nothing needs them);
 * - more than {@linkcode MAX_TABLES} tables, or tables whose minimum sizes
 *   exceed {@linkcode MAX_TABLE_ENTRIES} entries in all;
 * - blocks nested deeper than {@linkcode MAX_NESTING} (engines spend memory
 *   per open block while validating and compiling);
 * - more functions, globals, exports, imports, element segments or tags than
 *   {@linkcode MAX_COUNTS} allows. What an engine keeps and does per function, global and export is
 *   host memory and host time no fuel pays for: a 4 MiB module of a million
 *   empty functions held 95 MiB once compiled, 800,000 globals took 50–70 ms
 *   to instantiate, 100,000 exports 25 ms, 500,000 element segments 20–26 ms
 *   and 500,000 tags 7–12 ms, on every fresh call. Real
 *   plugins stay far below (the JS engine: 1,092 functions, 11 globals).
 *
 * All checks are one linear pass over the bytes.
 *
 * @module
 */

import { HookboxError } from "../../core/errors.ts";
import { decodeInstr, type Instr, newInstr, OPENERS } from "./_opcodes.ts";
import { ATOMIC, OP } from "./_op.ts";
import { SECTION } from "./_module.ts";
import type { ParsedModule } from "./_parse.ts";
import { Reader } from "./_reader.ts";
import { admitTypes } from "./_type_budget.ts";

/** Most tables a module may define. */
export const MAX_TABLES = 16;
/** Most table entries a module may have in all (at their capped maximum). */
export const MAX_TABLE_ENTRIES = 1 << 20;
/**
 * What one table entry costs the host, in bytes, counted against the memory
 * budget (V8 measured 24–27 bytes per funcref entry).
 */
export const TABLE_ENTRY_BYTES = 32;
/** Deepest block nesting accepted (the QuickJS engine needs 279). */
export const MAX_NESTING = 2048;
/**
 * Most functions (imported and defined), globals, exports, imports, element
 * and data segments and tags a module may have (data segments: V8's own
 * limit; a JS hook's engine snapshot has about 9,000).
 */
export const MAX_COUNTS: Readonly<
  Record<"functions" | "globals" | "exports" | "imports" | "elements" | "data" | "tags", number>
> = Object.freeze({
  functions: 100_000,
  globals: 4_096,
  exports: 4_096,
  imports: 1_024,
  elements: 4_096,
  data: 100_000,
  tags: 4_096,
});

/** How `refuseCount` names each count. */
const COUNT_NAMES: Readonly<Record<keyof typeof MAX_COUNTS, string>> = {
  functions: "functions",
  globals: "globals",
  exports: "exports",
  imports: "imports",
  elements: "element segments",
  data: "data segments",
  tags: "tags",
};

/**
 * Throws `LIMIT_MODULE` when a module has more `what` than
 * {@linkcode MAX_COUNTS} allows. The parser checks each section's own count
 * before it reads the entries (a 4 MiB module of a million imports took 100
 * MB and 2 s to read), `checkModule` the totals.
 */
export function refuseCount(what: keyof typeof MAX_COUNTS, count: number): void {
  if (count > MAX_COUNTS[what]) {
    throw new HookboxError(
      "LIMIT_MODULE",
      `module has ${count} ${COUNT_NAMES[what]}, at most ${MAX_COUNTS[what]} are allowed`,
    );
  }
}

/** Throws a coded `HookboxError` for the first thing in `m` the rewriter refuses. */
export function checkModule(m: ParsedModule): void {
  const funcImports = m.imports.filter((i) => i.kind === "func").length;
  const counts = {
    functions: funcImports + m.functions.length,
    globals: m.imports.filter((i) => i.kind === "global").length + m.globals.length,
    exports: m.exports.length,
    imports: m.imports.length,
    elements: sectionCount(m, SECTION.element),
    data: sectionCount(m, SECTION.data),
    tags: m.imports.filter((i) => i.kind === "tag").length + sectionCount(m, SECTION.tag),
  };
  const kinds = [
    "functions",
    "globals",
    "exports",
    "imports",
    "elements",
    "data",
    "tags",
  ] as const;
  for (const what of kinds) refuseCount(what, counts[what]);
  m.memories.forEach((mem, i) => {
    if (mem.shared) {
      denied(`memory ${i} is shared: shared memories are not allowed (a hook has no threads)`);
    }
  });
  if (m.tables.length > MAX_TABLES) {
    throw new HookboxError(
      "LIMIT_MODULE",
      `module defines ${m.tables.length} tables, at most ${MAX_TABLES} are allowed`,
    );
  }
  let entries = 0;
  m.tables.forEach((t, i) => {
    if (t.is64) denied(`table ${i} is 64-bit: 64-bit tables are not allowed`);
    entries += t.min;
  });
  if (entries > MAX_TABLE_ENTRIES) {
    throw new HookboxError(
      "LIMIT_MEMORY",
      `tables need ${entries} entries at start, at most ${MAX_TABLE_ENTRIES} are allowed`,
    );
  }
  checkBodies(m);
  // Last, so a module refused for anything else spends none of the thread's types.
  admitTypes(m.bytes);
}

/** The count a section starts with (element and tag sections), or 0 without the section. */
function sectionCount(m: ParsedModule, id: number): number {
  const section = m.sections.find((s) => s.id === id);
  return section === undefined ? 0 : new Reader(m.bytes, section.start, section.end).u32();
}

function denied(message: string, offset?: number): never {
  throw new HookboxError(
    "PLUGIN_FEATURE_DENIED",
    message,
    offset === undefined ? {} : { offset },
  );
}

/** Refuses wait instructions and over-deep nesting in every function body. */
function checkBodies(m: ParsedModule): void {
  const code = m.sections.find((s) => s.id === SECTION.code);
  if (code === undefined) return;
  const r = new Reader(m.bytes, code.start, code.end);
  const instr: Instr = newInstr();
  for (let n = r.u32(), index = 0; index < n; index++) {
    const body = r.sub(r.u32());
    for (let groups = body.u32(); groups > 0; groups--) void (body.u32(), body.u8());
    let depth = 0;
    while (!body.done) {
      const at = body.pos;
      decodeInstr(body, instr);
      if (OPENERS.has(instr.op) && ++depth > MAX_NESTING) {
        throw new HookboxError(
          "LIMIT_MODULE",
          `function ${index} nests blocks deeper than ${MAX_NESTING} (at offset ${at})`,
          { offset: at },
        );
      }
      if (instr.op === OP.end || instr.op === OP.delegate) depth--;
      const wait = instr.op === OP.atomic &&
        (instr.sub === ATOMIC.wait32 || instr.sub === ATOMIC.wait64);
      if (wait) {
        denied(`memory.atomic.wait at offset ${at}: waiting is not allowed (no threads)`, at);
      }
    }
  }
}
