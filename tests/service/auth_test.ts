import assert from "node:assert/strict";
import { newId } from "../../packages/service/auth.ts";

Deno.test("ids sort by the time they were made and never repeat", () => {
  const base = Date.UTC(2026, 10, 22);
  const ids = Array.from({ length: 2000 }, (_, i) => newId("dec", base + Math.floor(i / 10)));
  assert.equal(
    new Set(ids).size,
    ids.length,
    "80 random bits per id: ten per millisecond still differ",
  );
  for (const id of ids) assert.match(id, /^dec_[0-9a-f]{12}[A-Za-z0-9_-]{14}$/);
  const byTime = ids.map((id, i) => [id.slice(0, 16), i] as const);
  for (let i = 1; i < byTime.length; i++) {
    assert.ok(byTime[i - 1]![0] <= byTime[i]![0], "a later id never sorts before an earlier one");
  }
  assert.ok(newId("dec", base + 1) > newId("dec", base).slice(0, 16));
});
