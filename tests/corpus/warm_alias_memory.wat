;; Attack: exports its memory only as "heap", so a warm snapshot that looked
;; for "memory" restored nothing: each call bumps a digit and prints it, and a
;; warm instance leaked the count from call to call (and tenant to tenant).
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "heap") 1)
  (data (i32.const 100) "0")
  (func (export "_start")
    (i32.store8 (i32.const 100) (i32.add (i32.load8_u (i32.const 100)) (i32.const 1)))
    (i32.store (i32.const 0) (i32.const 100))
    (i32.store (i32.const 4) (i32.const 1))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
