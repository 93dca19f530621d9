/**
 * The HTTP bridge between a runtime worker and the main thread. A guest's
 * `http_request` is a synchronous import, so the worker posts an
 * {@linkcode HttpAsk} and blocks with `Atomics.wait` on a SharedArrayBuffer;
 * the main thread fetches, writes the reply into that buffer and
 * `Atomics.notify`s. A new buffer per request: a late reply to a request the
 * worker gave up on lands in a buffer nobody reads.
 *
 * Buffer layout: i32 state, i32 status, i32 length, i32 unused, then `length`
 * bytes (the body, or the error message).
 *
 * @module
 */

/** What the guest asked for (the Extism request JSON, plus the body block). */
export interface HttpCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Uint8Array | null;
}

/** Worker → main: perform `call` and write the reply into `buffer`. */
export interface HttpAsk {
  type: "http";
  call: HttpCall;
  /** Response bodies longer than this are refused. */
  maxBytes: number;
  /** What is left of the call's wall-clock budget. */
  timeoutMs: number;
  buffer: SharedArrayBuffer;
}

/** How a request ended, as the guest side sees it. */
export type HttpReply =
  | { kind: "ok"; status: number; body: Uint8Array }
  | { kind: "error"; message: string }
  | { kind: "timeout" };

const HEADER = 16;
const MESSAGE_ROOM = 1024;
const STATE = { pending: 0, ok: 1, error: 2, timeout: 3 } as const;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Worker side: posts the request and blocks until the reply or `timeoutMs`. */
export function askHttp(
  post: (ask: HttpAsk) => void,
  call: HttpCall,
  maxBytes: number,
  timeoutMs: number,
): HttpReply {
  const buffer = new SharedArrayBuffer(HEADER + Math.max(maxBytes, MESSAGE_ROOM));
  const words = new Int32Array(buffer, 0, 4);
  post({ type: "http", call, maxBytes, timeoutMs, buffer });
  if (Atomics.wait(words, 0, STATE.pending, timeoutMs) === "timed-out") return { kind: "timeout" };
  const length = words[2] ?? 0;
  const data = new Uint8Array(buffer, HEADER, length).slice();
  switch (Atomics.load(words, 0)) {
    case STATE.ok:
      return { kind: "ok", status: words[1] ?? 0, body: data };
    case STATE.timeout:
      return { kind: "timeout" };
    default:
      return { kind: "error", message: decoder.decode(data) };
  }
}

/** Main side: writes `reply` into the asker's buffer and wakes it. */
export function answerHttp(buffer: SharedArrayBuffer, reply: HttpReply): void {
  const words = new Int32Array(buffer, 0, 4);
  const room = new Uint8Array(buffer, HEADER);
  let state: number = STATE.timeout;
  if (reply.kind === "ok") {
    room.set(reply.body.subarray(0, room.length));
    words[1] = reply.status;
    words[2] = Math.min(reply.body.length, room.length);
    state = STATE.ok;
  } else if (reply.kind === "error") {
    const { written } = encoder.encodeInto(reply.message, room);
    words[2] = written;
    state = STATE.error;
  }
  Atomics.store(words, 0, state);
  Atomics.notify(words, 0);
}

/**
 * True when `hostname` is granted by `patterns` (HOOK.md `allowed_hosts`):
 * an exact host name, or `*.example.com` for any subdomain of example.com
 * (not example.com itself). Ports are not part of the grant.
 */
export function hostAllowed(hostname: string, patterns: readonly string[]): boolean {
  const host = hostname.toLowerCase();
  return patterns.some((raw) => {
    const pattern = raw.toLowerCase();
    if (pattern.startsWith("*.")) {
      return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
    }
    return host === pattern;
  });
}
