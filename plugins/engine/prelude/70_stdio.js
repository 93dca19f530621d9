// deno-lint-ignore-file no-unused-vars -- prelude files are fragments of one function body

// hookbox prelude, part 7: process.stdin / stdout / stderr. stdin is read to
// its end in one go (the event is small and already complete); a flowing
// stream delivers it as one 'data' chunk on the next loop turn, then 'end'.

let stdinRest = null;

/** All of stdin as UTF-8 text when nothing was read yet (the common case), decoded in C. */
function takeStdinText() {
  if (stdinRest !== null) return takeStdin().toString("utf8");
  stdinRest = new Uint8Array(0);
  return host.readStdinText();
}

/** The part of stdin nobody has read yet (all of it, at most once). */
function takeStdin() {
  if (stdinRest === null) stdinRest = new Uint8Array(host.readStdin());
  const out = stdinRest;
  stdinRest = new Uint8Array(0);
  return wrapBytes(out);
}

class Stdin extends EventEmitter {
  fd = 0;
  isTTY = undefined;
  readable = true;
  readableEnded = false;
  #encoding = null;
  #flowing = null;
  #buffered = null;
  #sawEof = null;
  setEncoding(enc) {
    this.#encoding = normalizeEncoding(enc);
    return this;
  }
  _listenerAdded(name) {
    if (name === "data" && this.#flowing !== false) this.resume();
    if (name === "readable") this.#flowing = false;
  }
  resume() {
    this.#flowing = true;
    return this;
  }
  pause() {
    this.#flowing = false;
    return this;
  }
  #chunk(bytes) {
    return this.#encoding ? bytes.toString(this.#encoding) : bytes;
  }
  /** Paused-mode read: the whole rest once, then null. */
  read() {
    const bytes = this.#buffered ?? takeStdin();
    this.#buffered = wrapBytes(new Uint8Array(0));
    return bytes.length > 0 ? this.#chunk(bytes) : null;
  }
  /** Loop hook: deliver stdin if someone listens. True when it did something. */
  _pump() {
    if (this.readableEnded) return false;
    if (this.#flowing === true) {
      const bytes = takeStdin();
      if (bytes.length > 0) this.emit("data", this.#chunk(bytes));
    } else if (this.#flowing === false && this.listenerCount("readable") > 0) {
      if (!this.#sawEof) {
        // First turn: the data is available; second turn: EOF ('readable' again, read() → rest).
        this.#buffered = takeStdin();
        this.#sawEof = this.#buffered.length === 0 ? "eof" : "data";
        if (this.#sawEof === "data") this.emit("readable");
        if (this.#sawEof === "data") return true;
      }
      this.emit("readable");
      if (this.#buffered.length > 0) return false; // Node ends only once everything was read
    } else {
      return false;
    }
    this.readableEnded = true;
    this.readable = false;
    this.emit("end");
    this.emit("close");
    return true;
  }
  async *[Symbol.asyncIterator]() {
    const bytes = takeStdin();
    this.readableEnded = true;
    if (bytes.length > 0) yield this.#chunk(bytes);
  }
  pipe(dest) {
    this.on("data", (c) => dest.write(c));
    return dest;
  }
}

class Stdout extends EventEmitter {
  writable = true;
  isTTY = undefined;
  constructor(fd) {
    super();
    this.fd = fd;
  }
  write(data, encOrCb, cb) {
    const bytes = typeof data === "string" && typeof encOrCb === "string"
      ? encodeString(data, encOrCb)
      : data;
    writeFd(this.fd, typeof bytes === "string" ? bytes : toBytes(bytes));
    const done = typeof encOrCb === "function" ? encOrCb : cb;
    if (done) queueMicrotask(() => done(null));
    return true;
  }
  end(data, cb) {
    if (data !== undefined && typeof data !== "function") this.write(data);
    const done = typeof data === "function" ? data : cb;
    if (done) queueMicrotask(done);
    return this;
  }
}

const stdin = new Stdin();
const stdout = new Stdout(1);
const stderr = new Stdout(2);

function consoleMethod(stream) {
  return (...args) => stream.write(format(...args) + "\n");
}

const console = {
  log: consoleMethod(stdout),
  info: consoleMethod(stdout),
  debug: consoleMethod(stdout),
  error: consoleMethod(stderr),
  warn: consoleMethod(stderr),
  trace: consoleMethod(stderr),
  dir: (v) => stdout.write(inspect(v) + "\n"),
  table: consoleMethod(stdout),
  assert: (ok, ...args) => {
    if (!ok) stderr.write(format("Assertion failed" + (args.length ? ":" : ""), ...args) + "\n");
  },
  time() {},
  timeEnd() {},
  group() {},
  groupEnd() {},
};
defineGlobal("console", console);
