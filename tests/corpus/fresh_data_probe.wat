;; Probe: a fresh instance must see its data segments and zeros everywhere
;; else, whatever the call before it wrote into the same (reused) memory.
;; Checks the bytes of its two segments ("AB" at 100, "CD" at 300) and the
;; zeros around and between them, then overwrites all of them: it prints "ok"
;; when it found a pristine memory and exits 3 otherwise. Every fresh call
;; must print "ok".
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "AB")
  (data (i32.const 300) "CD")
  (func $expect (param $at i32) (param $byte i32)
    (if (i32.ne (i32.load8_u (local.get $at)) (local.get $byte))
      (then (unreachable))))
  (func (export "_start")
    (local $i i32)
    (call $expect (i32.const 100) (i32.const 65))
    (call $expect (i32.const 101) (i32.const 66))
    (call $expect (i32.const 300) (i32.const 67))
    (call $expect (i32.const 301) (i32.const 68))
    ;; zeros: 32..99, 102..299, 302..65535
    (local.set $i (i32.const 32))
    (block $done
      (loop $scan
        (br_if $done (i32.ge_u (local.get $i) (i32.const 65536)))
        (if (i32.and
              (i32.and (i32.ne (local.get $i) (i32.const 100)) (i32.ne (local.get $i) (i32.const 101)))
              (i32.and (i32.ne (local.get $i) (i32.const 300)) (i32.ne (local.get $i) (i32.const 301))))
          (then (call $expect (local.get $i) (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    ;; dirty everything the next call checks
    (memory.fill (i32.const 32) (i32.const 9) (i32.sub (i32.const 65536) (i32.const 32)))
    (i32.store8 (i32.const 16) (i32.const 111)) ;; "o"
    (i32.store8 (i32.const 17) (i32.const 107)) ;; "k"
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))
