// hookbox prelude, part 10: the event loop controller `_start` drives.
// After the microtasks drain, `tick()` runs one step (due timers, stdin,
// immediates, then the next future timer) and says whether anything is left.

const unhandled = new Map();
// Set at each start, not at snapshot time: code that runs before (a
// function-style hook's top level) keeps QuickJS's own generator.
const hostRandom = () => host.random();
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
    startedAt = null;
    grantedEnv = null;
    Math.random = hostRandom;
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
  // Function-style hooks: the event from stdin to the default export; its
  // answer — an object (control fields, printed as JSON), a string (printed),
  // a number (the exit code), or nothing (allow) — possibly through a promise.
  call(fn) {
    const text = takeStdinText();
    let event;
    try {
      event = JSON.parse(text);
    } catch (err) {
      throw new SyntaxError(`the event on stdin is not JSON: ${err.message}`);
    }
    const answer = (value) => {
      if (value === undefined || value === null) return;
      if (typeof value === "number") process.exitCode = value;
      else stdout.write(typeof value === "string" ? value : `${JSON.stringify(value)}\n`);
    };
    const result = fn(event);
    if (result !== null && typeof result === "object" && typeof result.then === "function") {
      this.track(Promise.resolve(result).then(answer));
    } else answer(result);
  },
  ticks: runNextTicks,
  rejection(promise, reason, handled) {
    if (handled) unhandled.delete(promise);
    else unhandled.set(promise, reason);
  },
  tick() {
    if (unhandled.size > 0) {
      for (const [promise, reason] of unhandled) {
        unhandled.delete(promise);
        throw reason;
      }
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
