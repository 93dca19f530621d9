/**
 * Stands in for `runtime-wasm/worker/_worker_runtime.ts` in an edge Worker (see
 * `NO_WORKER_MODE`): worker mode (a Web Worker per plugin thread) has no
 * place there.
 *
 * @module
 */
/** Not in an edge bundle. */
export class WorkerRuntime {
  constructor() {
    throw new Error("worker mode is not available in an edge bundle");
  }
}
