/**
 * The function types a thread may hand to the engine. V8 keeps every
 * distinct function type it has seen for the life of the process (validating
 * a module is enough) and ends the whole process past about 1.9 million
 * ("Fatal process out of memory: too many canonicalized types"). Modules with
 * many distinct types, a few thousand each, would take any process that
 * checks or runs them down: a server and every tenant on it, or an agent's
 * hook call (a crash is the agent's non-blocking error).
 *
 * So a module may declare at most {@linkcode MAX_MODULE_TYPES} types, and a
 * process hands the engine at most {@linkcode MAX_PROCESS_TYPES} in all:
 * each thread counts the types it has not seen itself on one counter shared
 * by every thread that loads plugins (`shareTypeBudget`; a thread started
 * again counts its types again, so the count only overstates what the
 * engine holds). Past it a module bringing new types is refused
 * (`LIMIT_MODULE`), while modules whose types a thread has seen still load.
 * Real plugins share a few hundred types between them. Every path that gives
 * untrusted bytes to the engine admits them here first (the rewriter's check,
 * and the prepared-plugin caches read from disk).
 *
 * @module
 */
import { HookboxError } from "../../core/errors.ts";
import { readValType, SECTION, splitSections } from "./_module.ts";
import { Reader } from "./_reader.ts";

/** Most types one module may declare. */
export const MAX_MODULE_TYPES = 4_096;
/**
 * Most function types the threads of a process hand to the engine, counted
 * per thread: far below the engine's ~1.9 million for the process.
 */
export const MAX_PROCESS_TYPES = 1_000_000;

/** The types this thread has admitted (their encoded bytes). */
const admitted = new Set<string>();
/** The process's count: this thread's own until `shareTypeBudget` gives it the shared one. */
let counter = new Int32Array(
  typeof SharedArrayBuffer === "function" ? new SharedArrayBuffer(4) : new ArrayBuffer(4),
);

/** The counter to hand to a thread that will load plugins (`shareTypeBudget` there). */
export function typeBudgetBuffer(): ArrayBufferLike {
  return counter.buffer;
}

/** Counts this thread's types on `buffer`, the process's counter (`typeBudgetBuffer`). */
export function shareTypeBudget(buffer: ArrayBufferLike): void {
  counter = new Int32Array(buffer);
}

/**
 * Admits the types of `bytes` (a module, before the engine sees it): throws
 * `LIMIT_MODULE` when it declares more than {@linkcode MAX_MODULE_TYPES}, or
 * when the ones new to this thread would take the process past
 * {@linkcode MAX_PROCESS_TYPES}.
 * Malformed type sections are left for the parser to refuse.
 */
export function admitTypes(bytes: Uint8Array): void {
  const { declared, keys } = typeKeys(bytes);
  refuseDeclaredTypes(declared);
  const fresh = new Set(keys.filter((k) => !admitted.has(k)));
  if (fresh.size === 0) return;
  const total = Atomics.add(counter, 0, fresh.size) + fresh.size;
  if (total > MAX_PROCESS_TYPES) {
    Atomics.sub(counter, 0, fresh.size);
    throw new HookboxError(
      "LIMIT_MODULE",
      `module brings ${fresh.size} function types this process has not seen; it has counted ` +
        `${total - fresh.size} and takes at most ${MAX_PROCESS_TYPES} (WebAssembly engines end ` +
        `a process that has seen too many); restart the process to count again`,
    );
  }
  for (const key of fresh) admitted.add(key);
}

/**
 * Throws `LIMIT_MODULE` when a module declares more than
 * {@linkcode MAX_MODULE_TYPES} types: checked from the type section's count
 * before its types are read (the parser would read them all first, a
 * repository's twenty modules of 100,000 types each in seconds).
 */
export function refuseDeclaredTypes(declared: number): void {
  if (declared > MAX_MODULE_TYPES) {
    throw new HookboxError(
      "LIMIT_MODULE",
      `module has ${declared} types, at most ${MAX_MODULE_TYPES} are allowed`,
    );
  }
}

/** Types the process has counted so far. */
export function admittedTypes(): number {
  return Atomics.load(counter, 0);
}

/**
 * How many types the type section declares, and the encoded bytes of each
 * (as text; not read past {@linkcode MAX_MODULE_TYPES}); none without one.
 */
function typeKeys(bytes: Uint8Array): { declared: number; keys: string[] } {
  const keys: string[] = [];
  let sections;
  try {
    sections = splitSections(bytes);
  } catch {
    return { declared: 0, keys }; // not a module: the parser says why
  }
  const section = sections.find((s) => s.id === SECTION.type);
  if (section === undefined) return { declared: 0, keys };
  const decoder = new TextDecoder("latin1");
  let declared = 0;
  try {
    const r = new Reader(bytes, section.start, section.end);
    declared = r.u32();
    if (declared > MAX_MODULE_TYPES) return { declared, keys };
    for (let n = declared; n > 0 && !r.done; n--) {
      const at = r.pos;
      if (r.u8() !== 0x60) break; // not a plain function type: the parser refuses it
      for (let vectors = 0; vectors < 2; vectors++) {
        for (let count = r.u32(); count > 0; count--) readValType(r);
      }
      keys.push(decoder.decode(bytes.subarray(at, r.pos)));
    }
  } catch {
    // A truncated section or a type the parser refuses: what was read counts.
  }
  return { declared, keys };
}
