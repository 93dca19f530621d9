;; Benign guard, WASI command ABI: reads the event on stdin and exits 2 with a
;; reason on stderr when it contains "rm -rf"; otherwise exits 0 silently.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 2)
  ;; 0: iovec, 16: byte count, 64: reason (its first 6 bytes are the pattern), 1024: input
  (data (i32.const 64) "rm -rf is not allowed")
  (func $read_all (result i32)
    (local $total i32)
    (loop $more
      (i32.store (i32.const 0) (i32.add (i32.const 1024) (local.get $total)))
      (i32.store (i32.const 4) (i32.sub (i32.const 64512) (local.get $total)))
      (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
      (local.set $total (i32.add (local.get $total) (i32.load (i32.const 16))))
      (br_if $more (i32.and
        (i32.ne (i32.load (i32.const 16)) (i32.const 0))
        (i32.lt_u (local.get $total) (i32.const 64512)))))
    (local.get $total))
  (func $contains (param $len i32) (result i32)
    (local $i i32) (local $j i32)
    (block $done
      (loop $outer
        (br_if $done (i32.gt_s (i32.add (local.get $i) (i32.const 6)) (local.get $len)))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $inner
            (br_if $mismatch (i32.ne
              (i32.load8_u (i32.add (i32.const 1024) (i32.add (local.get $i) (local.get $j))))
              (i32.load8_u (i32.add (i32.const 64) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $inner (i32.lt_u (local.get $j) (i32.const 6))))
          (return (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $outer)))
    (i32.const 0))
  (func (export "_start")
    (if (call $contains (call $read_all))
      (then
        (i32.store (i32.const 0) (i32.const 64))
        (i32.store (i32.const 4) (i32.const 21))
        (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 16)))
        (call $proc_exit (i32.const 2))))))
