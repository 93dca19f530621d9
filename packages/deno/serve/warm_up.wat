;; The plugin `hookbox serve` warms itself up with (src/adapters/deno/warm_up.ts), a
;; WASI command: reads the event on stdin; exits 2 with a reason on stderr when
;; it holds a "!", otherwise prints {} on stdout. Its bytes are in
;; _warm_up_plugin.ts (`deno run -A scripts/build_warm_up_plugin.ts` writes them).
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  ;; 0: iovec, 16: byte count, 32: "{}", 48: reason, 1024..: input
  (data (i32.const 32) "{}")
  (data (i32.const 48) "warm-up")
  (func $write (param $fd i32) (param $at i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $at))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 16))))
  (func (export "_start")
    (local $total i32)
    (local $i i32)
    (loop $more
      (i32.store (i32.const 0) (i32.add (i32.const 1024) (local.get $total)))
      (i32.store (i32.const 4) (i32.sub (i32.const 64512) (local.get $total)))
      (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
      (local.set $total (i32.add (local.get $total) (i32.load (i32.const 16))))
      (br_if $more (i32.and
        (i32.ne (i32.load (i32.const 16)) (i32.const 0))
        (i32.lt_u (local.get $total) (i32.const 64512)))))
    (block $allow
      (loop $scan
        (br_if $allow (i32.ge_u (local.get $i) (local.get $total)))
        (if (i32.eq (i32.load8_u (i32.add (i32.const 1024) (local.get $i))) (i32.const 33))
          (then
            (call $write (i32.const 2) (i32.const 48) (i32.const 7))
            (call $proc_exit (i32.const 2))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (call $write (i32.const 1) (i32.const 32) (i32.const 2))))
