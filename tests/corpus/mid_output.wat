;; Prints 40 KiB of "x" and exits 0: an answer bigger than a connection's
;; share of memory, smaller than what the event codec writes.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (memory.fill (i32.const 1024) (i32.const 120) (i32.const 40960))
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 40960))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
