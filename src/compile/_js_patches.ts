/**
 * Our changes to QuickJS sources, applied at engine build time to the text
 * read from the npm package (the package itself is never modified). Each
 * patch names the exact text it replaces; a QuickJS release without that text
 * fails the build instead of silently building unpatched.
 *
 * @module
 */
import { HookboxError } from "../errors.ts";

/** One textual replacement in one QuickJS file. */
export interface SourcePatch {
  file: string;
  why: string;
  find: string;
  replace: string;
}

/**
 * An unanchored regex search (`/x/.test(s)`) compiles to a bytecode prefix
 * that tries every start position by backtracking: each position pushes and
 * pops a full backtrack state. `hb_lre_search` runs the same loop in C, one
 * `lre_exec_backtrack` call per position on the body after the prefix, with
 * the captures reset as the popped state would have reset them, and advances
 * one character as `REOP_any` would (a surrogate pair in UTF-16 mode).
 *
 * When the body must begin with one literal character (after zero-width
 * steps only: the whole-match start and word boundaries; not under the `i`
 * flag, and not a surrogate code unit), a match can only start where that
 * character is, so the loop skips to its next occurrence (`memchr` on 8-bit
 * strings, a code-unit scan on 16-bit ones — never inside a surrogate pair,
 * as the character is not one) instead of trying every position; no
 * occurrence left means no match. The skipping is WebAssembly like the rest
 * of the engine, so it is metered.
 */
const REGEX_SEARCH: SourcePatch = {
  file: "libregexp.c",
  why: "unanchored regex search loop in C",
  find: `    ret = lre_exec_backtrack(s, capture, stack_buf, 0, bc_buf + RE_HEADER_LEN,
                             cbuf + (cindex << cbuf_type), FALSE);`,
  replace: `    ret = hb_lre_search(s, capture, stack_buf, bc_buf + RE_HEADER_LEN,
                        cbuf + (cindex << cbuf_type));`,
};

const REGEX_SEARCH_FN: SourcePatch = {
  file: "libregexp.c",
  why: "unanchored regex search loop in C (the loop)",
  find: `int lre_exec(uint8_t **capture,`,
  replace: `/* hookbox: see src/compile/_js_patches.ts */
static intptr_t hb_lre_search(REExecContext *s, uint8_t **capture,
                              StackInt *stack_buf, const uint8_t *pc,
                              const uint8_t *cptr)
{
    int cbuf_type = s->cbuf_type, i;
    const uint8_t *cbuf_end = s->cbuf_end;
    uint32_t c;
    intptr_t ret;
    const uint8_t *q;
    int first = -1;
    if (!(pc[0] == REOP_split_goto_first && get_u32(pc + 1) == 6 &&
          pc[5] == REOP_any && pc[6] == REOP_goto && (int32_t)get_u32(pc + 7) == -11))
        return lre_exec_backtrack(s, capture, stack_buf, 0, pc, cptr, FALSE);
    pc += 11;
    if (!s->ignore_case) {
        for (q = pc;; q += q[0] == REOP_save_start ? 2 : 1) {
            if (q[0] != REOP_save_start && q[0] != REOP_word_boundary &&
                q[0] != REOP_not_word_boundary)
                break;
        }
        if (q[0] == REOP_char) {
            c = get_u16(q + 1);
            if (c < 0xD800 || c > 0xDFFF)
                first = c;
        }
    }
    for (;;) {
        if (first >= 0) {
            if (cbuf_type == 0) {
                q = first <= 0xff ? memchr(cptr, first, cbuf_end - cptr) : NULL;
            } else {
                const uint16_t *u = (const uint16_t *)cptr;
                const uint16_t *end = (const uint16_t *)cbuf_end;
                while (u < end && *u != first)
                    u++;
                q = u < end ? (const uint8_t *)u : NULL;
            }
            if (q == NULL)
                return 0;
            cptr = q;
        }
        ret = lre_exec_backtrack(s, capture, stack_buf, 0, pc, cptr, FALSE);
        if (ret != 0 || cptr == cbuf_end)
            return ret;
        for (i = 0; i < s->capture_count * 2; i++)
            capture[i] = NULL;
        GET_CHAR(c, cptr, cbuf_end);
    }
}

int lre_exec(uint8_t **capture,`,
};

/** Every patch, in the order applied. */
/**
 * String literals (JSON strings and JavaScript source) were built one
 * character at a time: a call, a bounds check and, every so often, a
 * reallocation per character. A run of printable ASCII characters that ends
 * nothing (not the quote, not a backslash, not `$` in a template, which may
 * start `${`) is now appended at once. Every character the run takes would
 * have been appended unchanged by the loop, so the result and every error are
 * the same; the scan is WebAssembly like the rest, so it is metered.
 */
const STRING_RUNS: SourcePatch = {
  file: "quickjs.c",
  why: "string literals appended a run at a time",
  find: `    if (string_buffer_init(s->ctx, b, 32))
        goto fail;
    for(;;) {
        if (p >= s->buf_end)
            goto invalid_char;
        c = *p;
        if (c < 0x20) {
            if (!s->cur_func) {`,
  replace: `    if (string_buffer_init(s->ctx, b, 32))
        goto fail;
    for(;;) {
        /* hookbox: see src/compile/_js_patches.ts */
        {
            const uint8_t *q = p;
            while (q < s->buf_end && *q >= 0x20 && *q < 0x80 && *q != sep &&
                   *q != '\\\\' && !(*q == '$' && sep == '\`'))
                q++;
            if (q != p) {
                if (string_buffer_write8(b, p, q - p))
                    goto fail;
                p = q;
            }
        }
        if (p >= s->buf_end)
            goto invalid_char;
        c = *p;
        if (c < 0x20) {
            if (!s->cur_func) {`,
};

/**
 * QuickJS's JSON strings accepted JavaScript's escapes too (\\x41, \\v, \\',
 * \\u{41}, a line continuation, \\q as q), which JSON.parse must reject. In
 * JSON text (no function being compiled) only the escapes JSON has are now
 * taken, as in other engines.
 */
const JSON_ESCAPES: SourcePatch = {
  file: "quickjs.c",
  why: "JSON strings take only JSON's escapes",
  find: `        if (c == '\\\\') {
            c = *p;
            /* XXX: need a specific JSON case to avoid
               accepting invalid escapes */`,
  replace: `        if (c == '\\\\') {
            c = *p;
            /* hookbox: see src/compile/_js_patches.ts */
            if (!s->cur_func && (c == 0 || !strchr("\\"\\\\/bfnrtu", c) ||
                                 (c == 'u' && p[1] == '{')))
                goto invalid_escape;`,
};

/**
 * Atoms that exist when the snapshot is taken are treated like QuickJS's
 * predefined ones: never reference-counted, never freed. A warm call then
 * writes nothing into the snapshot's atom strings when it looks a property
 * name up (JSON.parse of an event touches one per key), so fewer 256-byte
 * blocks need restoring. Every atom-level count change goes through
 * `__JS_AtomIsConst` and is skipped as a pair (a dup and its free, or a
 * string handed in as an atom and dropped at once), so the counts stay
 * balanced; a value-level count (a JSValue of the atom's string) never drops
 * to zero because the atom's own references, frozen at the snapshot, are part
 * of it. An atom made during a call in a slot below the limit is kept until
 * the call's memory is thrown away. `hb_freeze_atoms` (engine.c, at the end
 * of the snapshot) sets the limit; until then it is QuickJS's own.
 */
const SNAPSHOT_ATOMS: SourcePatch = {
  file: "quickjs.c",
  why: "atoms of the snapshot are constant",
  find: `static inline BOOL __JS_AtomIsConst(JSAtom v)
{
#if defined(DUMP_LEAKS) && DUMP_LEAKS > 1
        return (int32_t)v <= 0;
#else
        return (int32_t)v < JS_ATOM_END;
#endif`,
  replace: `/* hookbox: see src/compile/_js_patches.ts */
static int32_t hb_const_atoms = JS_ATOM_END;

void hb_freeze_atoms(JSRuntime *rt)
{
    hb_const_atoms = rt->atom_size;
}

static inline BOOL __JS_AtomIsConst(JSAtom v)
{
#if defined(DUMP_LEAKS) && DUMP_LEAKS > 1
        return (int32_t)v <= 0;
#else
        return (int32_t)v < hb_const_atoms;
#endif`,
};

/**
 * Objects and strings that exist when the snapshot is taken are immortal: a
 * value-level reference count change on anything below the call arena
 * (`hb_immortal_below`, set by engine.c once the snapshot's heap is sealed) is
 * skipped, so a warm call writes nothing into the snapshot's objects it only
 * reads, and fewer 256-byte blocks need restoring. Such an object is never
 * freed during a call (its memory is restored or thrown away after it).
 *
 * What must then hold, and does (each place patched below): no count of an
 * immortal value changes — `JS_DupValue`/`JS_FreeValue` (both forms) and
 * `js_free_string` skip it, and so does the one direct increment of a
 * function's bytecode when a closure is made from it; the cycle collector
 * treats it as a root (its child marking neither decrements nor increments
 * it, so its count stays positive and it stays alive, and the mortal objects
 * it references are re-counted by the scan); nothing changes an immortal
 * string in place (string concatenation reuses a string's buffer when its
 * count is 1 — never an immortal one's); and nothing allocated during a call
 * lands below the arena (engine.c fills the free chunks below it first).
 */
const IMMORTAL_HEADER = `/* hookbox: see src/compile/_js_patches.ts (IMMORTAL) */
extern uintptr_t hb_immortal_below;
#define HB_IMMORTAL(p) ((uintptr_t)(p) < hb_immortal_below)
`;
/** The start of QuickJS's inline reference-count functions, up to the count itself. */
const REF_HEAD = `
{
    if (JS_VALUE_HAS_REF_COUNT(v)) {
        JSRefCountHeader *p = (JSRefCountHeader *)JS_VALUE_GET_PTR(v);
`;

/** `JS_FreeValue` / `JS_FreeValueRT` (by `signature`): an immortal value is not counted. */
function immortalFree(signature: string, before = ""): SourcePatch {
  return {
    file: "quickjs.h",
    why: `immortal snapshot values: ${signature}`,
    find: `${signature}${REF_HEAD}        if (--p->ref_count <= 0) {`,
    replace: `${before}${signature}${REF_HEAD}        if (HB_IMMORTAL(p))
            return;
        if (--p->ref_count <= 0) {`,
  };
}

/** `JS_DupValue` / `JS_DupValueRT` (by `signature`): an immortal value is not counted. */
function immortalDup(signature: string): SourcePatch {
  return {
    file: "quickjs.h",
    why: `immortal snapshot values: ${signature}`,
    find: `${signature}${REF_HEAD}        p->ref_count++;`,
    replace: `${signature}${REF_HEAD}        if (!HB_IMMORTAL(p))
            p->ref_count++;`,
  };
}

/** A child-marking function of the cycle collector (`name`): an immortal object is a root. */
function immortalRoot(name: string, firstLine: string): SourcePatch {
  const head = `static void ${name}(JSRuntime *rt, JSGCObjectHeader *p)
{
`;
  return {
    file: "quickjs.c",
    why: `immortal snapshot values: ${name}`,
    find: `${head}${firstLine}`,
    replace: `${head}    if (HB_IMMORTAL(p))
        return;
${firstLine}`,
  };
}

const IMMORTAL_FREE = immortalFree(
  "static inline void JS_FreeValue(JSContext *ctx, JSValue v)",
  `${IMMORTAL_HEADER}\n`,
);
const IMMORTAL_FREE_RT = immortalFree(
  "static inline void JS_FreeValueRT(JSRuntime *rt, JSValue v)",
);
const IMMORTAL_DUP = immortalDup(
  "static inline JSValue JS_DupValue(JSContext *ctx, JSValueConst v)",
);
const IMMORTAL_DUP_RT = immortalDup(
  "static inline JSValue JS_DupValueRT(JSRuntime *rt, JSValueConst v)",
);
const IMMORTAL_STRING_FREE: SourcePatch = {
  file: "quickjs.c",
  why: "immortal snapshot values: js_free_string",
  find: `static inline void js_free_string(JSRuntime *rt, JSString *str)
{
    if (--str->header.ref_count <= 0) {`,
  replace: `static inline void js_free_string(JSRuntime *rt, JSString *str)
{
    if (HB_IMMORTAL(str))
        return;
    if (--str->header.ref_count <= 0) {`,
};
const IMMORTAL_CONCAT: SourcePatch = {
  file: "quickjs.c",
  why: "immortal snapshot values: no in-place concatenation",
  find: `    if (p1->header.ref_count == 1 && p1->is_wide_char == p2->is_wide_char`,
  replace:
    `    if (p1->header.ref_count == 1 && !HB_IMMORTAL(p1) && p1->is_wide_char == p2->is_wide_char`,
};
const IMMORTAL_BYTECODE: SourcePatch = {
  file: "quickjs.c",
  why: "immortal snapshot values: closures of snapshot bytecode",
  find: `    p->u.func.function_bytecode = b;
    b->header.ref_count++;`,
  replace: `    p->u.func.function_bytecode = b;
    if (!HB_IMMORTAL(b))
        b->header.ref_count++;`,
};
const IMMORTAL_GC_DECREF = immortalRoot("gc_decref_child", "    assert(p->ref_count > 0);");
const IMMORTAL_GC_INCREF = immortalRoot("gc_scan_incref_child", "    p->ref_count++;");
const IMMORTAL_GC_INCREF2 = immortalRoot("gc_scan_incref_child2", "    p->ref_count++;");

export const PATCHES: readonly SourcePatch[] = [
  REGEX_SEARCH_FN,
  REGEX_SEARCH,
  STRING_RUNS,
  JSON_ESCAPES,
  SNAPSHOT_ATOMS,
  IMMORTAL_FREE,
  IMMORTAL_FREE_RT,
  IMMORTAL_DUP,
  IMMORTAL_DUP_RT,
  IMMORTAL_STRING_FREE,
  IMMORTAL_CONCAT,
  IMMORTAL_BYTECODE,
  IMMORTAL_GC_DECREF,
  IMMORTAL_GC_INCREF,
  IMMORTAL_GC_INCREF2,
];

/** `text` of QuickJS file `file` with our patches applied. */
export function patchSource(file: string, text: string): string {
  let out = text;
  for (const patch of PATCHES) {
    if (patch.file !== file) continue;
    const at = out.indexOf(patch.find);
    if (at < 0 || out.indexOf(patch.find, at + 1) >= 0) {
      throw new HookboxError(
        "COMPILE_FAILED",
        `cannot apply the QuickJS patch "${patch.why}": ${file} does not contain its text exactly once`,
      );
    }
    out = out.slice(0, at) + patch.replace + out.slice(at + patch.find.length);
  }
  return out;
}

/** True when `file` has patches. */
export function isPatched(file: string): boolean {
  return PATCHES.some((p) => p.file === file);
}
