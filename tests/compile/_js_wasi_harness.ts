/**
 * A tiny WASI host for the JS compiler's tests: stdin, stdout, stderr,
 * environment, clocks, randomness, proc_exit, and `hookbox.should_interrupt`
 * driven by a call budget (deterministic, unlike a wall-clock deadline).
 *
 * @module
 */

/** What one run produced. */
export interface HarnessResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Options of {@linkcode runWasi}. */
export interface HarnessOptions {
  stdin?: string;
  env?: Record<string, string>;
  /** should_interrupt answers 1 after this many polls. @default Infinity */
  interruptAfter?: number;
}

class Exit {
  constructor(readonly code: number) {}
}

const ERRNO_BADF = 8;

/** Instantiates `module` and runs `_start` once. */
export async function runWasi(
  module: WebAssembly.Module,
  options: HarnessOptions = {},
): Promise<HarnessResult> {
  const stdin = new TextEncoder().encode(options.stdin ?? "");
  let stdinAt = 0;
  const out: Record<number, Uint8Array[]> = { 1: [], 2: [] };
  const envBytes = Object.entries(options.env ?? {}).map(([k, v]) =>
    new TextEncoder().encode(`${k}=${v}\0`)
  );
  let polls = 0;
  const state: { memory?: WebAssembly.Memory } = {};
  const view = () => new DataView(state.memory!.buffer);
  const bytes = () => new Uint8Array(state.memory!.buffer);
  const wasi = {
    fd_write(fd: number, iovs: number, count: number, written: number) {
      if (!out[fd]) return ERRNO_BADF;
      let n = 0;
      for (let i = 0; i < count; i++) {
        const ptr = view().getUint32(iovs + i * 8, true);
        const len = view().getUint32(iovs + i * 8 + 4, true);
        out[fd]!.push(bytes().slice(ptr, ptr + len));
        n += len;
      }
      view().setUint32(written, n, true);
      return 0;
    },
    fd_read(fd: number, iovs: number, count: number, read: number) {
      if (fd !== 0) return ERRNO_BADF;
      let n = 0;
      for (let i = 0; i < count; i++) {
        const ptr = view().getUint32(iovs + i * 8, true);
        const len = view().getUint32(iovs + i * 8 + 4, true);
        const chunk = stdin.subarray(stdinAt, stdinAt + len);
        bytes().set(chunk, ptr);
        stdinAt += chunk.length;
        n += chunk.length;
      }
      view().setUint32(read, n, true);
      return 0;
    },
    fd_close: () => 0,
    fd_seek: () => ERRNO_BADF,
    fd_fdstat_get: (fd: number, buf: number) => {
      if (fd > 2) return ERRNO_BADF;
      bytes().fill(0, buf, buf + 24);
      view().setUint8(buf, 2);
      return 0;
    },
    environ_sizes_get(countPtr: number, sizePtr: number) {
      view().setUint32(countPtr, envBytes.length, true);
      view().setUint32(sizePtr, envBytes.reduce((n, b) => n + b.length, 0), true);
      return 0;
    },
    environ_get(ptrs: number, buf: number) {
      let at = buf;
      envBytes.forEach((b, i) => {
        view().setUint32(ptrs + i * 4, at, true);
        bytes().set(b, at);
        at += b.length;
      });
      return 0;
    },
    clock_time_get(_id: number, _precision: bigint, ptr: number) {
      view().setBigUint64(ptr, BigInt(Math.round(performance.now() * 1e6)), true);
      return 0;
    },
    random_get(ptr: number, len: number) {
      crypto.getRandomValues(bytes().subarray(ptr, ptr + len));
      return 0;
    },
    proc_exit(code: number): never {
      throw new Exit(code);
    },
  };
  const hookbox = {
    should_interrupt: () => (++polls > (options.interruptAfter ?? Infinity) ? 1 : 0),
  };
  const instance = await WebAssembly.instantiate(module, {
    wasi_snapshot_preview1: wasi,
    hookbox,
  });
  state.memory = instance.exports.memory as WebAssembly.Memory;
  let exitCode = 0;
  try {
    (instance.exports._start as () => void)();
  } catch (err) {
    if (!(err instanceof Exit)) throw err;
    exitCode = err.code;
  }
  const text = (fd: number) => new TextDecoder().decode(concat(out[fd]!));
  return { exitCode, stdout: text(1), stderr: text(2) };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all;
}
