/**
 * Test-only worker entry: the real runtime worker, except that a call whose
 * event contains "STALL" blocks the worker thread for good once the call has
 * started — like a host function that never returns, which no metering can
 * interrupt. Only terminating the worker ends it. A chain job stalls at once
 * when one of its events contains "STALL".
 *
 * @module
 */
import "../../packages/runtime-wasm/worker/_worker_entry.ts";
import type {
  WorkerJob,
  WorkerMessage,
} from "../../packages/runtime-wasm/worker/_worker_protocol.ts";

interface Scope {
  onmessage: ((event: MessageEvent<WorkerJob>) => void) | null;
  postMessage(message: WorkerMessage): void;
}
const scope = globalThis as unknown as Scope;
const serve = scope.onmessage!;
const post = scope.postMessage.bind(scope);
const stalling = new Set<number>();
const decoder = new TextDecoder();

scope.postMessage = (message) => {
  post(message);
  if (message.type === "started" && stalling.has(message.id)) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
};
scope.onmessage = (event) => {
  const job = event.data;
  // A chain job stalls at once when one of its events says so.
  if (
    job.chains?.some((chain) =>
      JSON.stringify(chain.event ?? chain.eventText?.text).includes("STALL")
    )
  ) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
  if (job.type === "run" && decoder.decode(job.input).includes("STALL")) {
    // A plugin still to load stalls once it announces the start; a loaded one
    // (no announcement: its clock started with the job) stalls at once.
    if (!job.announce) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    stalling.add(job.id);
  }
  serve(event);
};
