/**
 * Test-only worker entry: the real runtime worker, except that it refuses a
 * chain whose event was sent as an object (the job fails, `WORKER_FAILED`): for the test that
 * events parsed from request text cross to the worker as that text
 * (`worker_chain_test.ts`).
 *
 * @module
 */
import "../../packages/runtime-wasm/worker/_worker_entry.ts";
import type {
  WorkerJob,
  WorkerMessage,
} from "../../packages/runtime-wasm/worker/_worker_protocol.ts";
import { runFailure } from "../../packages/core/runtime/failure.ts";

interface Scope {
  onmessage: ((event: MessageEvent<WorkerJob>) => void) | null;
  postMessage(message: WorkerMessage): void;
}
const scope = globalThis as unknown as Scope;
const serve = scope.onmessage!;
scope.onmessage = (event) => {
  const job = event.data;
  const chains = job.chains ?? [];
  if (chains.some((chain) => chain.event !== undefined || chain.eventText === undefined)) {
    const failure = runFailure("WORKER_FAILED", "a chain's event was sent as an object");
    scope.postMessage({
      type: "result",
      id: job.id,
      result: { exitCode: null, stdout: "", stderr: "", failure },
    });
    return;
  }
  serve(event);
};
