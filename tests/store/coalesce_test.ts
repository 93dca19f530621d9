import assert from "node:assert/strict";
import { ReadCoalescer } from "../../packages/store/coalesce.ts";

/** A store whose reads are answered when the test says so. */
function fakeStore() {
  let value = 1;
  const rounds: { keys: string[]; answer: (v?: number) => void; fail: (e: Error) => void }[] = [];
  const reader = new ReadCoalescer<string, string>((keys) =>
    new Promise((resolve, reject) => {
      const seen = value; // what the query sees, taken when it is sent
      rounds.push({
        keys,
        answer: () => resolve((key) => `${key}@${seen}`),
        fail: reject,
      });
    })
  );
  return { reader, rounds, write: () => value++ };
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("coalesced reads: calls made while a query runs share the next one", async () => {
  const { reader, rounds } = fakeStore();
  const first = reader.get("a");
  const later = [reader.get("b"), reader.get("c"), reader.get("b")];
  assert.equal(rounds.length, 1, "one query in flight");
  assert.deepEqual(rounds[0]!.keys, ["a"], "a lone call is sent at once");
  rounds[0]!.answer();
  assert.equal(await first, "a@1");
  await turn();
  assert.equal(rounds.length, 2);
  assert.deepEqual(rounds[1]!.keys, ["b", "c"], "each key asked once");
  rounds[1]!.answer();
  assert.deepEqual(await Promise.all(later), ["b@1", "c@1", "b@1"]);
});

Deno.test("coalesced reads: a call never takes the answer of a query sent before it (writes in between are seen)", async () => {
  const { reader, rounds, write } = fakeStore();
  const before = reader.get("k");
  write(); // e.g. a key revoked through another process, committed now
  const after = reader.get("k");
  rounds[0]!.answer();
  assert.equal(await before, "k@1");
  await turn();
  rounds[1]!.answer();
  assert.equal(await after, "k@2", "the second call waited for a query sent after the write");
});

Deno.test("coalesced reads: a failed query rejects its own calls only", async () => {
  const { reader, rounds } = fakeStore();
  const failed = reader.get("a");
  const next = reader.get("a");
  rounds[0]!.fail(new Error("connection lost"));
  await assert.rejects(failed, /connection lost/);
  await turn();
  rounds[1]!.answer();
  assert.equal(await next, "a@1");
});

Deno.test("coalesced reads: a round carries at most 512 keys, the rest go next", async () => {
  const { reader, rounds } = fakeStore();
  const first = reader.get("first");
  const many = Array.from({ length: 600 }, (_, i) => reader.get(`k${i}`));
  rounds[0]!.answer();
  await first;
  await turn();
  assert.equal(rounds[1]!.keys.length, 512);
  rounds[1]!.answer();
  await turn();
  assert.equal(rounds[2]!.keys.length, 88);
  rounds[2]!.answer();
  assert.equal((await Promise.all(many)).length, 600);
});
