;; Attack: answers exit 0 with control JSON nested 200,000 levels deep
;; ({"store":{"x":[[[...]]]}}): pretty-printing the result overflowed the
;; stack and the CLI exited 1 although a guard after it blocked.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 8)
  (data (i32.const 16) "{\"store\":{\"x\":")
  (func (export "_start") (local $i i32) (local $at i32)
    (local.set $at (i32.const 30))
    (loop $open
      (i32.store8 (local.get $at) (i32.const 91)) ;; [
      (local.set $at (i32.add (local.get $at) (i32.const 1)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $open (i32.lt_u (local.get $i) (i32.const 200000))))
    (loop $close
      (i32.store8 (local.get $at) (i32.const 93)) ;; ]
      (local.set $at (i32.add (local.get $at) (i32.const 1)))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $close (i32.gt_u (local.get $i) (i32.const 0))))
    (i32.store16 (local.get $at) (i32.const 0x7d7d)) ;; }}
    (local.set $at (i32.add (local.get $at) (i32.const 2)))
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.sub (local.get $at) (i32.const 16)))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
