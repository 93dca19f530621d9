/**
 * A long-running hookbox process keeps running past a promise rejected with
 * no handler (Deno would end it), with one error line for it.
 */
import assert from "node:assert/strict";

async function child(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./_unhandled_child.ts", import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test("logUnhandledRejections() keeps the process running, with one error line a rejection", async () => {
  const plain = await child();
  assert.notEqual(plain.code, 0, "without it, Deno ends the process");
  assert.doesNotMatch(plain.stdout, /still running/);
  const kept = await child("--keep");
  assert.equal(kept.code, 0);
  const [line, last] = kept.stdout.trim().split("\n");
  const entry = JSON.parse(line!);
  assert.equal(entry.level, "error");
  assert.equal(entry.msg, "unhandled rejection");
  assert.match(entry.error, /a fault nobody handled/);
  assert.equal(last, "still running");
});
