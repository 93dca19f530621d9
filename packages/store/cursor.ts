/**
 * Audit cursors: the sequence number of the last item a page held, opaque to
 * clients (base64url of a tagged decimal), refused when forged.
 *
 * @module
 */
import { HookboxError } from "../core/errors.ts";

/** The cursor after the item with sequence number `seq`. */
export function encodeCursor(seq: number): string {
  return btoa(`a:${seq}`).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** The sequence number a cursor names; throws `CURSOR_INVALID` for anything else. */
export function decodeCursor(cursor: string): number {
  let text = "";
  try {
    text = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
  } catch { /* reported below */ }
  const match = /^a:(\d{1,15})$/.exec(text);
  if (!match) throw new HookboxError("CURSOR_INVALID", "cursor is not one this server issued");
  return Number(match[1]);
}
