;; Attack: random_get with pointer -16 (0xfffffff0). Read as a signed number it
;; indexed from the end of memory, writing the last 16 bytes and marking no
;; page. It must be EFAULT (21) and write nothing; exit code 99 = written.
(module
  (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (local $errno i32)
    (local.set $errno (call $random (i32.const -16) (i32.const 16)))
    (if (i64.ne (i64.or (i64.load (i32.const 65520)) (i64.load (i32.const 65528))) (i64.const 0))
      (then (call $exit (i32.const 99))))
    (call $exit (local.get $errno))))
