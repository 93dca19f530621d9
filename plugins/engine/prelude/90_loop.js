// hookbox prelude, part 10: the event loop controller `_start` drives.
// After the microtasks drain, `tick()` runs one step (due timers, stdin,
// immediates, then the next future timer) and says whether anything is left.

const unhandled = new Map();
let topLevel = "none";

function describeError(err) {
  if (err instanceof Error) {
    const stack = typeof err.stack === "string" ? err.stack.trimEnd() : "";
    return `${err.name}: ${err.message}${stack ? `\n${stack}` : ""}`;
  }
  return `Uncaught ${inspect(err)}`;
}

defineGlobal("__hookbox_loop", {
  start() {
    startedAt = host.hrtime();
    process.env = host.env();
    const random = host.random;
    Math.random = () => random();
  },
  track(promise) {
    topLevel = "pending";
    promise.then(() => {
      topLevel = "settled";
    }, (err) => {
      topLevel = "settled";
      throw err;
    });
  },
  rejection(promise, reason, handled) {
    if (handled) unhandled.delete(promise);
    else unhandled.set(promise, reason);
  },
  tick() {
    for (const [promise, reason] of unhandled) {
      unhandled.delete(promise);
      throw reason;
    }
    return runNextTimer(true) || stdin._pump() || runImmediates() || runNextTimer(false);
  },
  finish() {
    if (topLevel === "pending" && exitCode === undefined) {
      stderr.write("Warning: Detected unsettled top-level await\n");
      exitCode = 13;
    }
    emitExit(exitCode ?? 0);
    return exitCode ?? 0;
  },
  fatal(err) {
    stderr.write(`${describeError(err)}\n`);
    exitCode = 1;
    emitExit(1);
    return 1;
  },
});
