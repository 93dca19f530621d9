;; Benign guard, WASI command ABI: reads the event on stdin and exits 2 with a
;; reason on stderr when it contains "rm -rf"; otherwise exits 0 silently.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  ;; 0: iovec, 16: byte count, 64: reason, 1024..65535: input
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
  ;; One pass: at each position compare "rm -" (i32) and "rf" (i16), unaligned loads.
  (func $contains (param $len i32) (result i32)
    (local $i i32)
    (block $done
      (loop $scan
        (br_if $done (i32.gt_s (i32.add (local.get $i) (i32.const 6)) (local.get $len)))
        (if (i32.and
              (i32.eq (i32.load (i32.add (i32.const 1024) (local.get $i))) (i32.const 0x2d206d72))
              (i32.eq (i32.load16_u (i32.add (i32.const 1028) (local.get $i))) (i32.const 0x6672)))
          (then (return (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i32.const 0))
  (func (export "_start")
    (if (call $contains (call $read_all))
      (then
        (i32.store (i32.const 0) (i32.const 64))
        (i32.store (i32.const 4) (i32.const 21))
        (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 16)))
        (call $proc_exit (i32.const 2))))))
