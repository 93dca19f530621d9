/**
 * Our changes to QuickJS sources (docs/COMPILER.md, "Engine"), kept as
 * unified diffs in `plugins/engine/patches/FILE.patch` and applied at engine
 * build time to the text read from the npm package (the package itself is
 * never modified). They are applied strictly — every hunk at its line, every
 * context and removed line exactly as written — so a QuickJS release they do
 * not fit fails the build instead of building unpatched or mispatched.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";

/** Where the patches are. */
export const PATCH_DIR = new URL("../../plugins/engine/patches/", import.meta.url).pathname;

/** The QuickJS files hookbox patches (each has `PATCH_DIR/FILE.patch`). */
export const PATCHED_FILES: readonly string[] = ["libregexp.c", "quickjs.c", "quickjs.h"];

/** The patch files, for the engine's cache keys. */
export function patchFiles(): string[] {
  return PATCHED_FILES.map((f) => `${PATCH_DIR}${f}.patch`);
}

/** True when `file` has patches. */
export function isPatched(file: string): boolean {
  return PATCHED_FILES.includes(file);
}

/** `text` of QuickJS file `file` with our patches applied (unchanged when it has none). */
export async function patchSource(file: string, text: string): Promise<string> {
  if (!isPatched(file)) return text;
  return applyPatch(text, await Deno.readTextFile(`${PATCH_DIR}${file}.patch`), file);
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/;

/**
 * `text` with the unified diff `patch` applied, strictly: a hunk whose lines
 * are not at its line of `text` exactly is a `COMPILE_FAILED` naming `file`.
 * Text before the diff's `---` line is a header and ignored.
 *
 * @example
 * ```ts ignore
 * applyPatch("a\nb\n", "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n", "x"); // "a\nc\n"
 * ```
 */
export function applyPatch(text: string, patch: string, file: string): string {
  const source = text.split("\n");
  const lines = patch.split("\n");
  const out: string[] = [];
  let at = 0; // index into source
  let i = lines.findIndex((l) => l.startsWith("--- "));
  if (i < 0 || !lines[i + 1]?.startsWith("+++ ")) fail(file, "the patch has no --- / +++ header");
  const refuse = (why: string): never => fail(file, why);
  for (i += 2; i < lines.length;) {
    const hunk = HUNK.exec(lines[i]!);
    if (hunk === null) {
      if (lines[i] === "") {
        i++;
        continue;
      }
      refuse(`unexpected line ${i + 1} of the patch: ${lines[i]!.slice(0, 60)}`);
    }
    const start = Number(hunk![1]) - 1;
    if (start < at) refuse(`hunk at line ${start + 1} overlaps the one before`);
    while (at < start) out.push(source[at++]!);
    for (i++; i < lines.length && !HUNK.test(lines[i]!); i++) {
      const line = lines[i]!;
      const body = line.slice(1);
      if (line.startsWith("+")) out.push(body);
      else if (line.startsWith(" ") || line.startsWith("-")) {
        if (source[at] !== body) {
          refuse(`line ${at + 1} is not "${body.slice(0, 60)}": the source is not the one patched`);
        }
        if (line.startsWith(" ")) out.push(body);
        at++;
      } else if (line === "" && i === lines.length - 1) break;
      else if (!line.startsWith("\\")) refuse(`unexpected line ${i + 1} of the patch`);
    }
  }
  while (at < source.length) out.push(source[at++]!);
  return out.join("\n");
}

function fail(file: string, why: string): never {
  throw new HookboxError(
    "COMPILE_FAILED",
    `cannot apply the QuickJS patch of ${file}: ${why}`,
    { path: `${PATCH_DIR}${file}.patch` },
  );
}
