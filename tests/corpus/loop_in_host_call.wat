;; Attack: spins forever on a host call (reading the clock), so most of the
;; time is spent in the host, not in metered guest code. Stopped by the
;; deadline check every host call makes.
(module
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever
      (drop (call $clock (i32.const 1) (i64.const 0) (i32.const 0)))
      (br $forever))))
