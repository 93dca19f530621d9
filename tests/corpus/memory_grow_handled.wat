;; Benign: asks for far more memory than any cap allows, handles the failed
;; memory.grow, prints "fallback" and exits 0. A failed grow alone must not
;; stop a call.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "fallback")
  (func (export "_start")
    (if (i32.eq (memory.grow (i32.const 60000)) (i32.const -1))
      (then
        (i32.store (i32.const 0) (i32.const 64))
        (i32.store (i32.const 4) (i32.const 8))
        (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))))
