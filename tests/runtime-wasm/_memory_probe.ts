/**
 * A WebAssembly probe of what an instance's memory holds, for tests of
 * memories shared or reused between plugins of one module.
 *
 * @module
 */
import { watBytes } from "./_corpus.ts";

/** The probes' imports (write a reason, exit with a code) and their 4-page memory. */
const WASI_HEAD = `(import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 4)`;

/**
 * A WASI command whose code is the same for every `data` (so the plugins
 * share one module): it prints the four bytes at 1000, 2000 and 3000 (a
 * zero as "."), then overwrites all twelve with "x" and fills 4096..8191.
 * `blocking`: it prints to stderr and exits 2 (a hook's block, the twelve
 * characters its reason).
 */
export function probe(
  name: string,
  data: Record<number, string>,
  blocking = false,
): Uint8Array {
  const segments = Object.entries(data)
    .map(([at, text]) => `(data (i32.const ${at}) "${text}")`)
    .join("\n  ");
  return watBytes(
    name,
    `(module
  ${WASI_HEAD}
  ${segments}
  (func $show (param $from i32) (param $to i32)
    (local $i i32) (local $b i32)
    (local.set $i (i32.const 0))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.const 4)))
        (local.set $b (i32.load8_u (i32.add (local.get $from) (local.get $i))))
        (i32.store8 (i32.add (local.get $to) (local.get $i))
          (select (i32.const 46) (local.get $b) (i32.eqz (local.get $b))))
        (i32.store8 (i32.add (local.get $from) (local.get $i)) (i32.const 120))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))
  (func (export "_start")
    (call $show (i32.const 1000) (i32.const 64))
    (call $show (i32.const 2000) (i32.const 68))
    (call $show (i32.const 3000) (i32.const 72))
    (memory.fill (i32.const 4096) (i32.const 7) (i32.const 4096))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 12))
    (drop (call $fd_write (i32.const ${
      blocking ? 2 : 1
    }) (i32.const 0) (i32.const 1) (i32.const 16)))
    ${blocking ? "(call $exit (i32.const 2))" : ""}))`,
  );
}

/**
 * A WASI command whose code is the same for every `tag` (4 characters, kept
 * at 4096, the first byte of a 256-byte tracked block): it blocks with the
 * four bytes at 4096 as its reason, then writes eight bytes at 4092 with one
 * store, whose block is the one before (a write marks the block it starts
 * in), so that only its last four bytes reach the tag's block.
 */
export function straddleProbe(name: string, tag: string): Uint8Array {
  return watBytes(
    name,
    `(module
  ${WASI_HEAD}
  (data (i32.const 4096) "${tag}")
  (func (export "_start")
    (i32.store (i32.const 64) (i32.load (i32.const 4096)))
    (i64.store (i32.const 4092) (i64.const 0x7878787878787878))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 4))
    (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 16)))
    (call $exit (i32.const 2))))`,
  );
}
