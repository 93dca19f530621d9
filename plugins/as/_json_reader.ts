// deno-fmt-ignore-file -- AssemblyScript source.
/**
 * A forgiving, allocation-light JSON scanner: it walks object keys to a
 * value and skips everything else. Malformed input yields "not found"
 * (a negative position), never a trap.
 */

const QUOTE: i32 = 0x22;
const BACKSLASH: i32 = 0x5c;

/** Scans one JSON text. Positions are UTF-16 indices into `text`. */
export class Reader {
  constructor(public text: string) {}

  /** First non-whitespace position at or after `pos`. */
  skipWs(pos: i32): i32 {
    const text = this.text;
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) break;
      pos++;
    }
    return pos;
  }

  /** Position just after the value starting at `pos`, or -1. */
  skipValue(pos: i32): i32 {
    pos = this.skipWs(pos);
    if (pos >= this.text.length) return -1;
    const c = this.text.charCodeAt(pos);
    if (c == QUOTE) return this.skipString(pos);
    if (c == 0x7b || c == 0x5b) return this.skipNested(pos);
    while (pos < this.text.length) {
      const d = this.text.charCodeAt(pos);
      if (d == 0x2c || d == 0x7d || d == 0x5d || d <= 0x20) break;
      pos++;
    }
    return pos;
  }

  /** Position just after the string literal starting at `pos`, or -1. */
  skipString(pos: i32): i32 {
    const text = this.text;
    for (let i = pos + 1; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c == BACKSLASH) i++;
      else if (c == QUOTE) return i + 1;
    }
    return -1;
  }

  /** Position of the value of `key` in the object starting at `pos`, or -1. */
  findKey(pos: i32, key: string): i32 {
    pos = this.skipWs(pos);
    if (pos >= this.text.length || this.text.charCodeAt(pos) != 0x7b) return -1;
    pos = this.skipWs(pos + 1);
    while (pos < this.text.length && this.text.charCodeAt(pos) == QUOTE) {
      const end = this.skipString(pos);
      if (end < 0) return -1;
      const name = this.decodeString(pos, end);
      const colon = this.skipWs(end);
      if (colon >= this.text.length || this.text.charCodeAt(colon) != 0x3a) return -1;
      if (name == key) return this.skipWs(colon + 1);
      const after = this.skipValue(colon + 1);
      if (after < 0) return -1;
      pos = this.skipWs(after);
      if (pos >= this.text.length || this.text.charCodeAt(pos) != 0x2c) return -1;
      pos = this.skipWs(pos + 1);
    }
    return -1;
  }

  /**
   * Decodes the string literal spanning `[start, end)` (quotes included): runs
   * between escapes are copied whole and joined once, so time and memory stay
   * linear (the AS runtime does not collect garbage during a call).
   */
  decodeString(start: i32, end: i32): string {
    const raw = this.text.substring(start + 1, end - 1);
    if (raw.indexOf("\\") < 0) return raw;
    const pieces: string[] = [];
    let run = 0;
    for (let i = 0; i < raw.length; i++) {
      if (raw.charCodeAt(i) != BACKSLASH || i + 1 >= raw.length) continue;
      pieces.push(raw.substring(run, i));
      const e = raw.charCodeAt(++i);
      if (e == 0x6e) pieces.push("\n");
      else if (e == 0x74) pieces.push("\t");
      else if (e == 0x72) pieces.push("\r");
      else if (e == 0x62) pieces.push("\b");
      else if (e == 0x66) pieces.push("\f");
      else if (e == 0x75 && i + 4 < raw.length) {
        pieces.push(String.fromCharCode(<i32>parseInt(raw.substring(i + 1, i + 5), 16)));
        i += 4;
      } else pieces.push(String.fromCharCode(e));
      run = i + 1;
    }
    pieces.push(raw.substring(run));
    return pieces.join("");
  }

  private skipNested(pos: i32): i32 {
    const text = this.text;
    let depth = 0;
    for (let i = pos; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c == QUOTE) {
        i = this.skipString(i) - 1;
        if (i < 0) return -1;
      } else if (c == 0x7b || c == 0x5b) depth++;
      else if (c == 0x7d || c == 0x5d) {
        if (--depth == 0) return i + 1;
      }
    }
    return -1;
  }
}
