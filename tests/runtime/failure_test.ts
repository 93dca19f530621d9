import assert from "node:assert/strict";
import { FAILURE_CODES, runFailure } from "../../src/mod.ts";

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

Deno.test("docs/FAILURES.md documents every failure code with its outcome and detail token", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/FAILURES.md", import.meta.url));
  const rows = new Map<string, string[]>();
  for (const line of doc.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const code = /^`([A-Z_]+)`$/.exec(cells[1] ?? "")?.[1];
    if (code) rows.set(code, cells);
  }
  for (const [code, { outcome, token }] of Object.entries(FAILURE_CODES)) {
    const row = rows.get(code);
    assert.ok(row, `${code} is documented`);
    assert.equal(row[2], outcome, `${code}'s outcome`);
    assert.ok(row[3]?.startsWith(`\`${token}`), `${code}'s detail starts with ${token}`);
  }
  const unknown = [...rows.keys()].filter((c) => !(c in FAILURE_CODES));
  assert.deepEqual(unknown, [], "no documented code that does not exist");
  const tokens = Object.values(FAILURE_CODES).map((f) => f.token);
  assert.equal(new Set(tokens).size, tokens.length, "tokens are distinct");
});
