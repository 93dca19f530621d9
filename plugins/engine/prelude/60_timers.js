// deno-lint-ignore-file no-unused-vars -- prelude files are fragments of one function body

// hookbox prelude, part 6: timers. There is no waiting inside the sandbox:
// when nothing else is left to do, the loop jumps to the next timer due
// (ordered by due time, then creation), so delays order callbacks but do not
// burn the hook's time budget.

const timers = new Map();
let timerSeq = 0;
const immediates = [];

class Timeout {
  constructor(id) {
    this.id = id;
  }
  ref() {
    return this;
  }
  unref() {
    const t = timers.get(this.id);
    if (t) t.unref = true;
    return this;
  }
  hasRef() {
    return !timers.get(this.id)?.unref;
  }
  [Symbol.toPrimitive]() {
    return this.id;
  }
}

function addTimer(fn, delay, args, repeat) {
  if (typeof fn !== "function") {
    throw new TypeError('The "callback" argument must be of type function');
  }
  const id = ++timerSeq;
  const ms = Math.max(1, Number(delay) || 0);
  timers.set(id, { fn, args, due: host.hrtime() + ms, ms, repeat, seq: id, unref: false });
  return new Timeout(id);
}

function clearTimer(handle) {
  if (handle != null) timers.delete(Number(handle));
}

/** Runs the earliest timer (if `onlyExpired`, only one already due). True when one ran. */
function runNextTimer(onlyExpired) {
  if (timers.size === 0) return false;
  let next;
  for (const [id, t] of timers) {
    if (t.unref) continue;
    if (!next || t.due < next[1].due || (t.due === next[1].due && t.seq < next[1].seq)) {
      next = [id, t];
    }
  }
  if (!next || (onlyExpired && next[1].due > host.hrtime())) return false;
  const [id, t] = next;
  if (t.repeat) Object.assign(t, { due: Math.max(t.due + t.ms, host.hrtime()), seq: ++timerSeq });
  else timers.delete(id);
  t.fn(...t.args);
  return true;
}

/** Runs the setImmediate callbacks queued so far. True when one ran. */
function runImmediates() {
  if (immediates.length === 0) return false;
  const batch = immediates.splice(0);
  for (const entry of batch) if (!entry.cleared) entry.fn(...entry.args);
  return batch.length > 0;
}

defineGlobal("setTimeout", (fn, delay, ...args) => addTimer(fn, delay, args, false));
defineGlobal("setInterval", (fn, delay, ...args) => addTimer(fn, delay, args, true));
defineGlobal("clearTimeout", clearTimer);
defineGlobal("clearInterval", clearTimer);
defineGlobal("setImmediate", (fn, ...args) => {
  const entry = { fn, args, cleared: false };
  immediates.push(entry);
  return entry;
});
defineGlobal("clearImmediate", (entry) => {
  if (entry) entry.cleared = true;
});
defineGlobal("queueMicrotask", (fn) => {
  Promise.resolve().then(fn);
});
defineGlobal("structuredClone", (v) => (v === undefined ? v : JSON.parse(JSON.stringify(v))));
defineGlobal("performance", {
  now: () => sinceStart(),
  get timeOrigin() {
    return Date.now() - this.now();
  },
});
// The call's start, read on first use (the clock's resolution is 1 ms, so
// the first reading is where the call began for every purpose).
let startedAt = null;
function sinceStart() {
  const now = host.hrtime();
  startedAt ??= now;
  return now - startedAt;
}
