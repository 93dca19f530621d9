import { concatBytes } from "../core/bytes.ts";

/** Reads a byte stream into text, keeping at most `cap` bytes. */
export interface CappedReader {
  /** Waits for the stream to end (at most `graceMs` more once asked), then returns the text. */
  drain(graceMs: number): Promise<string>;
}

/** Starts reading `stream`; calls `onOverflow` once when more than `cap` bytes arrive. */
export function readCapped(
  stream: ReadableStream<Uint8Array>,
  cap: number,
  onOverflow: () => void,
): CappedReader {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let overflowed = false;
  const reader = stream.getReader();
  const done = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (size < cap) chunks.push(value.subarray(0, cap - size));
        size += value.byteLength;
        if (size > cap && !overflowed) {
          overflowed = true;
          onOverflow();
        }
      }
    } catch { /* stream torn down */ }
  })();
  return {
    async drain(graceMs) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => timer = setTimeout(resolve, graceMs));
      await Promise.race([done, late]);
      clearTimeout(timer);
      await reader.cancel().catch(() => {});
      return new TextDecoder().decode(
        concatBytes(chunks, chunks.reduce((n, c) => n + c.byteLength, 0)),
      );
    },
  };
}
