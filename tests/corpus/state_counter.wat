;; Probe: increments a counter kept in a global and in memory on each call
;; and prints both digits. Warm isolation must print "11" on every call.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $count (mut i32) (i32.const 0))
  (func (export "_start")
    (global.set $count (i32.add (global.get $count) (i32.const 1)))
    (i32.store (i32.const 100) (i32.add (i32.load (i32.const 100)) (i32.const 1)))
    (i32.store8 (i32.const 64) (i32.add (i32.const 48) (global.get $count)))
    (i32.store8 (i32.const 65) (i32.add (i32.const 48) (i32.load (i32.const 100))))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
