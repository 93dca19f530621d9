// deno-lint-ignore-file no-unused-vars -- prelude files are fragments of one function body

// hookbox prelude, part 0: shared helpers. All prelude files are concatenated
// (in name order) into one function body that receives the native `host`.

/** Defines non-enumerable globals, like the built-ins Node exposes. */
function defineGlobal(name, value) {
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
}

/** The error every denied Node API throws: it names the API. */
function denied(api, hint) {
  const err = new Error(
    `${api} is not available in the hookbox sandbox` + (hint ? ` (${hint})` : ""),
  );
  err.code = "ERR_HOOKBOX_DENIED";
  return err;
}

/** UTF-8 bytes of a string, as a Uint8Array. */
function utf8Encode(text) {
  return new Uint8Array(host.utf8Encode(String(text)));
}

/** A string from UTF-8 bytes; invalid sequences become U+FFFD. */
function utf8Decode(bytes) {
  return host.utf8Decode(bytes);
}

/** Writes a string or bytes to fd 1 or 2, synchronously. */
function writeFd(fd, data) {
  host.write(fd, typeof data === "string" ? data : toBytes(data));
}

/** Any bytes-like value as a Uint8Array view. */
function toBytes(data) {
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) {
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return utf8Encode(String(data));
}

const hookPath = "/hook/scripts/run.js";

// QuickJS reports stack exhaustion as InternalError; Node code expects a RangeError.
Object.setPrototypeOf(InternalError.prototype, RangeError.prototype);
