// hookbox prelude, part 9: the Node built-in modules a hook may use, and a
// `require` that serves them. Anything else throws an error naming the API.

function stdinPath(path) {
  return path === 0 || path === "/dev/stdin" ||
    (path instanceof URL && path.href === "file:///dev/stdin");
}

function encodingOf(options) {
  return typeof options === "string" ? options : options?.encoding;
}

function readFileSync(path, options) {
  if (!stdinPath(path)) {
    throw denied(
      `fs.readFileSync(${JSON.stringify(String(path))})`,
      'only stdin (fd 0 or "/dev/stdin") can be read',
    );
  }
  const enc = encodingOf(options);
  if (enc === "utf8" || enc === "utf-8") return takeStdinText();
  const bytes = takeStdin();
  return enc ? bytes.toString(enc) : bytes;
}

function outFd(target) {
  if (target === 1 || target === "/dev/stdout") return 1;
  if (target === 2 || target === "/dev/stderr") return 2;
  return 0;
}

function writeSync(fd, data) {
  const out = outFd(fd);
  if (!out) throw denied(`fs.writeSync(${fd})`, "only fd 1 and 2 can be written");
  writeFd(out, typeof data === "string" ? data : toBytes(data));
  return typeof data === "string" ? utf8Encode(data).length : data.byteLength;
}

function deniedFn(name, hint) {
  return () => {
    throw denied(`fs.${name}()`, hint ?? "the sandbox has no file system");
  };
}

function promiseOf(fn) {
  return new Promise((resolve) => resolve(fn()));
}

const FS_DENIED = [
  "appendFileSync",
  "mkdirSync",
  "rmSync",
  "unlinkSync",
  "renameSync",
  "copyFileSync",
  "openSync",
  "readdirSync",
  "statSync",
  "lstatSync",
  "accessSync",
  "realpathSync",
  "mkdtempSync",
  "symlinkSync",
  "chmodSync",
  "readFile",
  "writeFile",
  "appendFile",
  "readdir",
  "stat",
  "mkdir",
  "rm",
  "unlink",
  "open",
  "createReadStream",
  "createWriteStream",
  "watch",
  "existsSync",
];

const fs = { readFileSync, writeSync, constants: { F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1 } };
fs.writeFileSync = (target, data) => {
  if (!outFd(target)) {
    throw denied(
      `fs.writeFileSync(${JSON.stringify(String(target))})`,
      "the sandbox has no file system",
    );
  }
  writeSync(outFd(target), data);
};
for (const name of FS_DENIED) fs[name] = deniedFn(name);
fs.promises = {
  readFile: (path, options) => promiseOf(() => readFileSync(path, options)),
  writeFile: (target, data) => promiseOf(() => fs.writeFileSync(target, data)),
};
for (const name of ["readdir", "stat", "mkdir", "rm", "unlink", "open", "access", "appendFile"]) {
  fs.promises[name] = () => promiseOf(deniedFn(`promises.${name}`));
}

const path = {
  sep: "/",
  delimiter: ":",
  basename: (p, ext) => {
    const base = String(p).replace(/\/+$/, "").split("/").pop() ?? "";
    return ext && base.endsWith(ext) && base !== ext ? base.slice(0, -ext.length) : base;
  },
  dirname: (p) => {
    const s = String(p).replace(/\/+$/, "");
    const i = s.lastIndexOf("/");
    return i < 0 ? "." : i === 0 ? "/" : s.slice(0, i);
  },
  extname: (p) => {
    const base = path.basename(p);
    const i = base.lastIndexOf(".");
    return i <= 0 ? "" : base.slice(i);
  },
  isAbsolute: (p) => String(p).startsWith("/"),
  normalize: (p) => {
    const s = String(p);
    if (s === "") return ".";
    const abs = s.startsWith("/");
    const out = [];
    for (const seg of s.split("/")) {
      if (seg === "" || seg === ".") continue;
      if (seg === ".." && out.length && out[out.length - 1] !== "..") out.pop();
      else if (seg !== ".." || !abs) out.push(seg);
    }
    const body = out.join("/");
    const tail = s.endsWith("/") && body ? "/" : "";
    return (abs ? "/" : "") + (body || (abs ? "" : ".")) + tail;
  },
  join: (...parts) => path.normalize(parts.filter((p) => p !== "").join("/") || "."),
  resolve: (...parts) => {
    let acc = "";
    for (const p of parts) acc = String(p).startsWith("/") ? String(p) : `${acc}/${p}`;
    const r = path.normalize(acc.startsWith("/") ? acc : `/hook/${acc}`);
    return r.length > 1 ? r.replace(/\/$/, "") : r;
  },
  relative: (from, to) => {
    const a = path.resolve(from).split("/").filter(Boolean);
    const b = path.resolve(to).split("/").filter(Boolean);
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    return [...a.slice(i).map(() => ".."), ...b.slice(i)].join("/");
  },
};
path.posix = path;

const util = {
  format,
  inspect,
  isDeepStrictEqual: (a, b) => JSON.stringify(a) === JSON.stringify(b),
  promisify: (fn) => (...args) =>
    new Promise((ok, fail) => fn(...args, (e, v) => (e ? fail(e) : ok(v)))),
  TextEncoder,
  TextDecoder,
  types: { isPromise: (v) => v instanceof Promise },
};

const eventsModule = Object.assign(EventEmitter, { EventEmitter, default: EventEmitter });
const timersModule = {
  setTimeout,
  setInterval,
  clearTimeout,
  clearInterval,
  setImmediate,
  clearImmediate,
};
const BUILTINS = {
  fs,
  path,
  util,
  process,
  events: eventsModule,
  buffer: { Buffer },
  url: { URL, URLSearchParams },
  timers: timersModule,
  "fs/promises": fs.promises,
  "path/posix": path,
  "timers/promises": {
    setTimeout: (ms, v) => new Promise((ok) => setTimeout(ok, ms, v)),
    setImmediate: (v) => new Promise((ok) => setImmediate(ok, v)),
  },
};

function require(name) {
  const text = String(name);
  const id = text.startsWith("node:") ? text.slice(5) : text;
  if (Object.prototype.hasOwnProperty.call(BUILTINS, id)) return BUILTINS[id];
  throw denied(
    `require(${JSON.stringify(String(name))})`,
    `${id} is not one of the modules hookbox provides: ${Object.keys(BUILTINS).join(", ")}`,
  );
}
defineGlobal("require", require);
defineGlobal("__hookbox_require", require);
