;; Attack (frozen clock): 10,000 host calls (clock_time_get) in a loop whose
;; own instructions cost a few units of fuel each, then exits 0 printing
;; "done". Where the clock stands still during CPU work (deployed edge
;; Workers) only fuel bounds it, so every host call must cost fuel: under a
;; 1,000,000 budget it is stopped with limit/fuel instead of finishing.
(module
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "done")
  (func (export "_start") (local $i i32)
    (loop $again
      (drop (call $clock (i32.const 1) (i64.const 0) (i32.const 0)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 10000))))
    (i32.store (i32.const 16) (i32.const 64))
    (i32.store (i32.const 20) (i32.const 4))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 32)))))
