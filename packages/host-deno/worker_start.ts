/**
 * Starting a worker thread without ending the process. A new worker's event
 * loop needs a few file descriptors, and when the process has none left
 * Deno panics and the whole process ends (Deno 2.9: an unwrap in
 * `runtime/tokio_util.rs`) — a client that held connections until a server
 * ran out of descriptors, then sent an upload that starts a worker, took the
 * server down for every tenant. {@linkcode startWorker} keeps a small
 * reserve of descriptors (`/dev/null` opened) and gives it back just for the
 * worker's start; when the reserve cannot be filled, the process is out of
 * descriptors and the start is refused with an error that says so (the
 * service answers it `503 OUT_OF_FILES`), never a panic.
 *
 * @module
 */

/** Descriptors held back for starting a worker (its event loop takes about three). */
const RESERVE = 16;

const held: Deno.FsFile[] = [];

/** Fills the reserve as far as the process's descriptors allow; true when it is full. */
function refill(): boolean {
  while (held.length < RESERVE) {
    try {
      held.push(Deno.openSync("/dev/null"));
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * `new Worker(url, options)`, with the reserve given back for the start and
 * taken again after; throws (`Too many open files`) instead when the
 * process has no descriptors to spare.
 */
export function startWorker(url: string | URL, options?: WorkerOptions): Worker {
  if (!refill()) {
    throw new Error(
      "Too many open files (os error 24): no file descriptors left to start a worker thread",
    );
  }
  for (const file of held.splice(0)) file.close();
  try {
    return new Worker(url, options);
  } finally {
    refill();
  }
}

/** {@linkcode startWorker} of a module worker: the form runtimes and stores take as an option. */
export function startModuleWorker(url: URL): Worker {
  return startWorker(url, { type: "module" });
}
