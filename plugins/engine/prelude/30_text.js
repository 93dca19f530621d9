// hookbox prelude, part 3: TextEncoder / TextDecoder (UTF-8 only), atob/btoa.

class TextEncoder {
  get encoding() {
    return "utf-8";
  }
  encode(input = "") {
    return utf8Encode(input);
  }
  encodeInto(input, dest) {
    const bytes = utf8Encode(input);
    const n = Math.min(bytes.length, dest.length);
    dest.set(bytes.subarray(0, n));
    return { read: input.length, written: n };
  }
}

class TextDecoder {
  #fatal;
  #ignoreBOM;
  constructor(label = "utf-8", options = {}) {
    const l = String(label).toLowerCase();
    if (l !== "utf-8" && l !== "utf8" && l !== "unicode-1-1-utf-8") {
      throw new RangeError(`The "${label}" encoding is not supported`);
    }
    this.#fatal = Boolean(options.fatal);
    this.#ignoreBOM = Boolean(options.ignoreBOM);
  }
  get encoding() {
    return "utf-8";
  }
  decode(input) {
    if (input === undefined) return "";
    const text = utf8Decode(toBytes(input));
    if (this.#fatal && text.includes("\uFFFD")) {
      throw new TypeError("The encoded data was not valid for encoding utf-8");
    }
    return !this.#ignoreBOM && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
}

defineGlobal("TextEncoder", TextEncoder);
defineGlobal("TextDecoder", TextDecoder);
defineGlobal(
  "btoa",
  (s) => encodeBase64(Uint8Array.from(String(s), (c) => c.charCodeAt(0)), false),
);
defineGlobal("atob", (s) => String.fromCharCode(...decodeBase64(String(s))));
