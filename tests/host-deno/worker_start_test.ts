/**
 * A worker asked for when the process has no file descriptors left is
 * refused with an error that says so, and the process goes on (Deno 2.9 ends
 * a process that starts a worker without descriptors to spare); once some are
 * free again, workers start.
 */
import assert from "node:assert/strict";

Deno.test("startWorker() refuses instead of ending the process when out of file descriptors", async () => {
  const child = new URL("./_worker_start_child.ts", import.meta.url).pathname;
  const out = await new Deno.Command("prlimit", {
    args: ["--nofile=256:256", Deno.execPath(), "run", "-A", child],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, `${text}${new TextDecoder().decode(out.stderr)}`);
  assert.match(text, /^held \d+$/m);
  assert.match(text, /^refused: Too many open files \(os error 24\): no file descriptors left/m);
  assert.match(text, /^answered ping$/m);
});
