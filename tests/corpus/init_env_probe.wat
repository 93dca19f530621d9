;; Probe: `_initialize` (which runs when the instance is made) records how
;; many environment variables it saw; `_start` prints that count and the
;; count it sees now. An instance made for one call (or ahead of it, during
;; another) must never answer a call that sees another environment: both
;; digits must always be equal.
(module
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func $count (result i32)
    (drop (call $sizes (i32.const 200) (i32.const 204)))
    (i32.load (i32.const 200)))
  (func (export "_initialize")
    (i32.store (i32.const 100) (call $count)))
  (func (export "_start")
    (i32.store8 (i32.const 64) (i32.add (i32.const 48) (i32.load (i32.const 100))))
    (i32.store8 (i32.const 65) (i32.add (i32.const 48) (call $count)))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
