// hookbox prelude, part 2: a small Node `Buffer` (a Uint8Array subclass) with
// the encodings hooks use: utf8, hex, base64, base64url, latin1/binary, ascii.

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function normalizeEncoding(enc) {
  if (enc === undefined || enc === "utf8") return "utf8";
  const e = String(enc || "utf8").toLowerCase();
  if (e === "utf-8") return "utf8";
  if (e === "binary") return "latin1";
  if (["utf8", "hex", "base64", "base64url", "latin1", "ascii"].includes(e)) return e;
  throw new TypeError(`Unknown encoding: ${enc}`);
}

function encodeBase64(bytes, url) {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63];
    out += i + 1 < bytes.length ? B64[(n >> 6) & 63] : url ? "" : "=";
    out += i + 2 < bytes.length ? B64[n & 63] : url ? "" : "=";
  }
  return url ? out.replace(/\+/g, "-").replace(/\//g, "_") : out;
}

function decodeBase64(text) {
  const clean = text.replace(/-/g, "+").replace(/_/g, "/").replace(/[^A-Za-z0-9+/]/g, "");
  const out = [];
  for (let i = 0; i < clean.length; i += 4) {
    const chunk = clean.slice(i, i + 4);
    const n = [...chunk].reduce((acc, c) => (acc << 6) | B64.indexOf(c), 0) <<
      (6 * (4 - chunk.length));
    if (chunk.length > 1) out.push((n >> 16) & 255);
    if (chunk.length > 2) out.push((n >> 8) & 255);
    if (chunk.length > 3) out.push(n & 255);
  }
  return out;
}

function encodeString(text, enc) {
  switch (normalizeEncoding(enc)) {
    case "utf8":
      return utf8Encode(text);
    case "hex":
      return Uint8Array.from(text.match(/../g) || [], (h) => parseInt(h, 16));
    case "base64":
    case "base64url":
      return Uint8Array.from(decodeBase64(text));
    default:
      return Uint8Array.from(text, (c) => c.charCodeAt(0) & 255);
  }
}

function wrapBytes(bytes) {
  return new Buffer(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

class Buffer extends Uint8Array {
  static from(value, encOrOffset, length) {
    if (typeof value === "string") return wrapBytes(encodeString(value, encOrOffset));
    if (value instanceof ArrayBuffer) {
      return new Buffer(value, encOrOffset ?? 0, length ?? value.byteLength - (encOrOffset ?? 0));
    }
    return wrapBytes(Uint8Array.from(value));
  }
  static alloc(size, fill) {
    const b = new Buffer(size);
    if (fill !== undefined) b.fill(typeof fill === "string" ? fill.charCodeAt(0) : fill);
    return b;
  }
  static allocUnsafe(size) {
    return new Buffer(size);
  }
  static isBuffer(value) {
    return value instanceof Buffer;
  }
  static byteLength(value, enc) {
    return typeof value === "string" ? encodeString(value, enc).length : value.byteLength;
  }
  static concat(list, total) {
    const size = total ?? list.reduce((n, b) => n + b.length, 0);
    const out = new Buffer(size);
    let at = 0;
    for (const b of list) {
      if (at >= size) break;
      out.set(b.subarray(0, size - at), at);
      at += b.length;
    }
    return out;
  }
  toString(enc, start = 0, end = this.length) {
    const bytes = this.subarray(start, end);
    switch (normalizeEncoding(enc)) {
      case "utf8":
        return utf8Decode(bytes);
      case "hex":
        return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      case "base64":
        return encodeBase64(bytes, false);
      case "base64url":
        return encodeBase64(bytes, true);
      case "ascii":
        return String.fromCharCode(...Array.from(bytes, (b) => b & 127));
      default:
        return String.fromCharCode(...bytes);
    }
  }
  toJSON() {
    return { type: "Buffer", data: Array.from(this) };
  }
  equals(other) {
    return this.length === other.length && this.every((b, i) => b === other[i]);
  }
  slice(start, end) {
    return this.subarray(start, end);
  }
  subarray(start, end) {
    const view = Uint8Array.prototype.subarray.call(this, start, end);
    return new Buffer(view.buffer, view.byteOffset, view.byteLength);
  }
  write(text, offset = 0) {
    const bytes = utf8Encode(text).subarray(0, this.length - offset);
    this.set(bytes, offset);
    return bytes.length;
  }
}
Object.defineProperty(Buffer, Symbol.species, { value: Uint8Array });

defineGlobal("Buffer", Buffer);
