/**
 * Answers to an upload never name the server's own folders: compile errors
 * and hook-test failures have the upload folder's path taken out. Those
 * texts quote a tenant's source and its hooks' output, so the cut must stay
 * linear: the one regex that described it took 2 s on 80,000 slashes, on the
 * thread that answers every tenant's requests.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { withoutUploadRoot } from "../../packages/deno/serve/hook_problems.ts";

const DESCRIBED = /\/[^\s"'()]*?hookbox-upload-[A-Za-z0-9_]+\/[^/\s"'()]+\/?/g;

Deno.test("an upload folder's path is taken out of messages, as described, on any text", () => {
  assert.equal(
    withoutUploadRoot("error in /tmp/hookbox-upload-ab12/guard/scripts/run.ts:3 (see /x)"),
    "error in scripts/run.ts:3 (see /x)",
  );
  const piece = fc.constantFrom(
    "/",
    " ",
    '"',
    "(",
    "a",
    "_",
    "-",
    "\n",
    "x1",
    "hookbox-upload",
    "hookbox-upload-",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 25 }).map((p) => p.join("")), (text) => {
      assert.equal(withoutUploadRoot(text), text.replaceAll(DESCRIBED, ""));
    }),
    { numRuns: 20_000 },
  );
});

Deno.test("a megabyte of slashes before an upload folder's mark is cut in one pass", () => {
  const text = `${"/".repeat(1 << 20)}hookbox-upload-`;
  assert.equal(withoutUploadRoot(text), text);
  const path = `${"/".repeat(1 << 20)}hookbox-upload-x1/name/run.ts`;
  assert.equal(withoutUploadRoot(path), "run.ts");
});
