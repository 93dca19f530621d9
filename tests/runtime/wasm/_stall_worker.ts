/**
 * Test-only worker entry: the real runtime worker, except that a call whose
 * event contains "STALL" blocks the worker thread for good — a host function
 * that never returns, which no metering can interrupt. Only terminating the
 * worker ends it.
 *
 * @module
 */
import "../../../src/runtime/wasm/_worker_entry.ts";
import type { WorkerJob } from "../../../src/runtime/wasm/_worker_protocol.ts";

type Handler = (event: MessageEvent<WorkerJob>) => void;
const scope = globalThis as unknown as { onmessage: Handler | null };
const serve = scope.onmessage!;
const decoder = new TextDecoder();

scope.onmessage = (event) => {
  const job = event.data;
  if (job.type === "run" && decoder.decode(job.input).includes("STALL")) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
  serve(event);
};
