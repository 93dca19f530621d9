// deno-fmt-ignore-file -- AssemblyScript source.
// deno-lint-ignore-file no-namespace -- AssemblyScript: `input.text()` reads like the hook API it is.
/**
 * Just enough JSON for hooks: read a value by its key path, quote a string
 * for output. AssemblyScript has no `JSON` global.
 */

import { Reader } from "./_json_reader";

/** JSON helpers: `json.getString(event, ["tool_input", "command"])`. */
export namespace json {
  /** The raw JSON text of the value at `path` (object keys), or null. */
  export function getRaw(text: string, path: string[]): string | null {
    const reader = new Reader(text);
    let pos = reader.skipWs(0);
    for (let i = 0; i < path.length; i++) {
      pos = reader.findKey(pos, path[i]);
      if (pos < 0) return null;
    }
    const end = reader.skipValue(pos);
    return end < 0 ? null : text.substring(pos, end);
  }

  /** The string at `path`, decoded; null when absent or not a string. */
  export function getString(text: string, path: string[]): string | null {
    const raw = getRaw(text, path);
    if (raw === null || raw.length < 2 || raw.charCodeAt(0) != 0x22) return null;
    return new Reader(raw).decodeString(0, raw.length);
  }

  /** The array of strings at `path`, decoded; null when absent, not an array, or not all strings. */
  export function getStrings(text: string, path: string[]): string[] | null {
    const raw = getRaw(text, path);
    if (raw === null || raw.charCodeAt(0) != 0x5b) return null;
    const reader = new Reader(raw);
    const out: string[] = [];
    let pos = reader.skipWs(1);
    if (pos < raw.length && raw.charCodeAt(pos) == 0x5d) return out;
    while (pos < raw.length && raw.charCodeAt(pos) == 0x22) {
      const end = reader.skipString(pos);
      if (end < 0) return null;
      out.push(reader.decodeString(pos, end));
      pos = reader.skipWs(end);
      if (pos >= raw.length) return null;
      const c = raw.charCodeAt(pos);
      if (c == 0x5d) return out;
      if (c != 0x2c) return null;
      pos = reader.skipWs(pos + 1);
    }
    return null;
  }

  /**
   * `value` as a JSON string literal, quotes included. Runs that need no
   * escape are copied whole and everything is joined once, so time and memory
   * stay linear (the AS runtime does not collect garbage during a call).
   */
  export function quote(value: string): string {
    const pieces: string[] = ["\""];
    let run = 0;
    for (let i = 0; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
      pieces.push(value.substring(run, i));
      if (c == 0x22) pieces.push("\\\"");
      else if (c == 0x5c) pieces.push("\\\\");
      else if (c == 0x0a) pieces.push("\\n");
      else if (c == 0x0d) pieces.push("\\r");
      else if (c == 0x09) pieces.push("\\t");
      else pieces.push("\\u" + c.toString(16).padStart(4, "0"));
      run = i + 1;
    }
    pieces.push(value.substring(run));
    pieces.push("\"");
    return pieces.join("");
  }
}
