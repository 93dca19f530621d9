/** Test helper: the smallest WASI preview1 host that runs a clang-built command. */

/** Thrown by `proc_exit`. */
export class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

const ENOSYS = 52;

/** Runs `_start` of `instance`-to-be; returns exit code and stdout. */
export function wasiImports(getMemory: () => WebAssembly.Memory) {
  let stdout = "";
  const view = () => new DataView(getMemory().buffer);
  const zeroPair = (a: number, b: number) => {
    view().setUint32(a, 0, true);
    view().setUint32(b, 0, true);
    return 0;
  };
  const known: Record<string, (...args: number[]) => number> = {
    args_sizes_get: zeroPair,
    environ_sizes_get: zeroPair,
    args_get: () => 0,
    environ_get: () => 0,
    fd_write(fd: number, iovs: number, count: number, written: number) {
      const dv = view();
      let total = 0;
      for (let i = 0; i < count; i++) {
        const ptr = dv.getUint32(iovs + i * 8, true);
        const len = dv.getUint32(iovs + i * 8 + 4, true);
        if (fd === 1) {
          stdout += new TextDecoder().decode(new Uint8Array(getMemory().buffer, ptr, len));
        }
        total += len;
      }
      dv.setUint32(written, total, true);
      return 0;
    },
    proc_exit(code: number) {
      throw new Exit(code);
    },
  };
  const wasi = new Proxy(known, { get: (t, name: string) => t[name] ?? (() => ENOSYS) });
  return { wasi, stdout: () => stdout };
}
