import assert from "node:assert/strict";
import { ERROR_CODES, FAILURE_CODES, runFailure } from "../../packages/hookbox/deno.ts";

Deno.test("runFailure() keeps the code and message apart and builds SPEC §4's detail from them", () => {
  assert.deepEqual(runFailure("LIMIT_FUEL"), {
    outcome: "limit",
    code: "LIMIT_FUEL",
    message: null,
    detail: "fuel",
  });
  assert.deepEqual(runFailure("TRAP", "unreachable"), {
    outcome: "error",
    code: "TRAP",
    message: "unreachable",
    detail: "trap: unreachable",
  });
  assert.equal(runFailure("SUBPROCESS_DENIED").outcome, "skipped");
  assert.equal(runFailure("TIMEOUT").detail, "time");
});

/** The rows of docs/errors.md's tables by code, and the section each is in. */
async function documentedCodes(): Promise<Map<string, { cells: string[]; section: string }>> {
  const doc = await Deno.readTextFile(new URL("../../docs/errors.md", import.meta.url));
  const rows = new Map<string, { cells: string[]; section: string }>();
  let section = "";
  for (const line of doc.split("\n")) {
    if (line.startsWith("## ")) section = line.slice(3);
    const cells = line.split("|").map((c) => c.trim());
    const code = /^`([A-Z_]+)`$/.exec(cells[1] ?? "")?.[1];
    if (code) rows.set(`${section}/${code}`, { cells, section });
  }
  return rows;
}

Deno.test("docs/errors.md documents every per-call code with its outcome and detail token", async () => {
  const rows = await documentedCodes();
  const perCall = "One hook call";
  for (const [code, { outcome, token }] of Object.entries(FAILURE_CODES)) {
    const row = rows.get(`${perCall}/${code}`)?.cells;
    assert.ok(row, `${code} is documented`);
    assert.equal(row[2], outcome, `${code}'s outcome`);
    assert.ok(row[3]?.startsWith(`\`${token}`), `${code}'s detail starts with ${token}`);
  }
  const unknown = [...rows.values()].filter(({ section }) => section === perCall)
    .map(({ cells }) => cells[1]!.slice(1, -1)).filter((c) => !(c in FAILURE_CODES));
  assert.deepEqual(unknown, [], "no per-call row for a code that is not one");
  const tokens = Object.values(FAILURE_CODES).map((f) => f.token);
  assert.equal(new Set(tokens).size, tokens.length, "tokens are distinct");
});

Deno.test("one list of codes: every per-call code is an error code, and docs/errors.md has them all", async () => {
  const all = new Set<string>(ERROR_CODES);
  assert.equal(all.size, ERROR_CODES.length, "no code listed twice");
  for (const code of Object.keys(FAILURE_CODES)) assert.ok(all.has(code), code);
  const documented = new Set([...(await documentedCodes()).keys()].map((k) => k.split("/")[1]!));
  assert.deepEqual(ERROR_CODES.filter((c) => !documented.has(c)), [], "codes without a row");
  assert.deepEqual(
    [...documented].filter((c) => !all.has(c)),
    [],
    "rows of codes that do not exist",
  );
  // Time-outs are spelt one way.
  assert.ok(all.has("TIMEOUT") && !all.has("LIMIT_TIME"));
});
