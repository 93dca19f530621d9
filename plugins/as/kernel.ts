// deno-fmt-ignore-file -- AssemblyScript source: decorators on declarations are not TypeScript.
/**
 * The Extism kernel functions hookbox AssemblyScript plugins import
 * (`extism:host/env`). Addresses are opaque i64 handles into host memory:
 * a plugin asks the host to `alloc` a block, copies bytes into it with
 * `store_*`, then hands the block over with `output_set` / `error_set`.
 *
 * The one other import is WASI `fd_read`: hookbox serves the event on fd 0 to
 * Extism-native plugins too, and reading it in one call is far cheaper than
 * one `input_load_u64` host call per 8 bytes.
 */

// @ts-ignore: decorator
@external("extism:host/env", "input_length")
export declare function input_length(): u64;

// @ts-ignore: decorator
@external("extism:host/env", "input_load_u8")
export declare function input_load_u8(offset: u64): u8;

// @ts-ignore: decorator
@external("extism:host/env", "input_load_u64")
export declare function input_load_u64(offset: u64): u64;

// @ts-ignore: decorator
@external("extism:host/env", "alloc")
export declare function alloc(length: u64): u64;

// @ts-ignore: decorator
@external("extism:host/env", "store_u8")
export declare function store_u8(address: u64, value: u8): void;

// @ts-ignore: decorator
@external("extism:host/env", "store_u64")
export declare function store_u64(address: u64, value: u64): void;

// @ts-ignore: decorator
@external("extism:host/env", "output_set")
export declare function output_set(address: u64, length: u64): void;

// @ts-ignore: decorator
@external("extism:host/env", "error_set")
export declare function error_set(address: u64): void;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_read")
export declare function fd_read(fd: i32, iovs: usize, iovsLength: i32, nread: usize): i32;
