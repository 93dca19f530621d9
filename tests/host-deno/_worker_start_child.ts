/**
 * Run by worker_start_test.ts under a low descriptor limit: takes every file
 * descriptor, asks for a worker (refused), gives some back, asks again (it
 * starts and answers). Prints one line per step.
 */
import { startWorker } from "../../packages/host-deno/worker_start.ts";

const echo = new URL("./_echo_worker.ts", import.meta.url);
const held: Deno.FsFile[] = [];
for (;;) {
  try {
    held.push(Deno.openSync("/dev/null"));
  } catch {
    break;
  }
}
console.log(`held ${held.length}`);
try {
  startWorker(echo, { type: "module" });
  console.log("started while out of descriptors");
} catch (err) {
  console.log(`refused: ${(err as Error).message}`);
}
for (const file of held.splice(0, 64)) file.close();
const worker = startWorker(echo, { type: "module" });
const answer = await new Promise((resolve) => {
  worker.onmessage = (event) => resolve(event.data);
  worker.postMessage("ping");
});
console.log(`answered ${answer}`);
worker.terminate();
