// deno-fmt-ignore-file -- AssemblyScript source: decorators on declarations are not TypeScript.
/**
 * The three WASI functions hookbox AssemblyScript plugins import: the event
 * is read from fd 0, stdout and stderr are written to fds 1 and 2 once at
 * the end of a call, and the exit code is handed over with `proc_exit`. A
 * plugin is thus a plain WASI command, which hookbox runs without the
 * Extism SDK's per-instance and per-call bookkeeping.
 */

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_read")
export declare function fd_read(fd: i32, iovs: usize, iovsLength: i32, nread: usize): i32;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_write")
export declare function fd_write(fd: i32, iovs: usize, iovsLength: i32, nwritten: usize): i32;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "proc_exit")
export declare function proc_exit(code: i32): void;
