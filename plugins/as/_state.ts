// deno-fmt-ignore-file -- AssemblyScript source.
/** Per-call state shared by the public API and the call wrapper. */

import { Sink } from "./sink";

/** What one call has read and written so far. */
export class CallState {
  /** The event bytes, once read. */
  input: Uint8Array | null = null;
  /** Bytes written to stdout. */
  out: Sink = new Sink();
  /** Bytes written to stderr. */
  err: Sink = new Sink();

  /** Forgets the previous call (warm instances are reused). */
  reset(): void {
    this.input = null;
    this.out.clear();
    this.err.clear();
  }
}

// A constant initialiser on purpose: `abort` reaches this state, and a global
// whose initialiser can itself abort would be compiled re-entrantly.
let current: CallState | null = null;

/** The one call state of this instance, created on first use. */
export function callState(): CallState {
  let state = current;
  if (state === null) {
    state = new CallState();
    current = state;
  }
  return state;
}

/** Appends `text`, UTF-8 encoded, to `sink`. */
export function appendString(sink: Sink, text: string): void {
  const encoded = String.UTF8.encode(text);
  sink.append(changetype<usize>(encoded), encoded.byteLength);
}
