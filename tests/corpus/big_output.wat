;; Prints 192 KiB of plain text (quotes, backslashes, newlines and UTF-8 among
;; the letters) and exits 0: output that is not a control object, big enough
;; to cross from a plugin worker as bytes.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 4)
  ;; 16 bytes of pattern at 64: a"b\c<newline>d, then U+00E9 (2 bytes) and 7 letters.
  (data (i32.const 64) "a\22b\5cc\0ad\c3\a9efghijk")
  (func (export "_start")
    (local $at i32)
    ;; Fill 192 KiB from 1024 with the 16-byte pattern.
    (local.set $at (i32.const 1024))
    (loop $fill
      (memory.copy (local.get $at) (i32.const 64) (i32.const 16))
      (local.set $at (i32.add (local.get $at) (i32.const 16)))
      (br_if $fill (i32.lt_u (local.get $at) (i32.const 197632))))
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 196608))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
