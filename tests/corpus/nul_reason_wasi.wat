;; Blocks (WASI command) with a reason holding a NUL byte and a byte that is not UTF-8: text a
;; PostgreSQL TEXT column cannot hold. The audit row must keep it storable (one tenant's hook
;; output must never fail a shared write).
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "bad\00reason\ff")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 11))
    (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 16)))
    (call $proc_exit (i32.const 2))
    (unreachable)))
