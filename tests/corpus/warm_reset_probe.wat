;; Probe for warm isolation: every call first checks that all of memory is
;; pristine (zero, except the data segment "pristine" at 8192) and exits 1
;; if a byte is not, 3 if the segment was changed. Then it writes memory every
;; way a plugin or the host can: stores (one straddling a 4 KiB page
;; boundary, one through a large static offset), memory.fill, fd_read of the
;; event, clock_time_get, random_get, args_get, fd_write's count, and a store
;; into memory it grew. Each host write lands on a 4 KiB page nothing else
;; writes. Its memory starts at 4 pages, so warm isolation tracks its writes
;; (as it does for any module of at most 4 KiB; a larger module with a smaller
;; memory is copied back whole). Every call must exit 0 with "ok".
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 4)
  (data (i32.const 8192) "pristine")
  (func $check
    (local $i i32) (local $end i32)
    (local.set $end (i32.mul (memory.size) (i32.const 65536)))
    (block $done
      (loop $scan
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (if (i32.and (i32.ne (i32.load8_u (local.get $i)) (i32.const 0))
                     (i32.or (i32.lt_u (local.get $i) (i32.const 8192))
                             (i32.ge_u (local.get $i) (i32.const 8200))))
          (then (call $exit (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    ;; "pristine" as a little-endian i64
    (if (i64.ne (i64.load (i32.const 8192)) (i64.const 0x656e697473697270))
      (then (call $exit (i32.const 3)))))
  (func (export "_start")
    (call $check)
    ;; guest stores
    (i64.store (i32.const 20476) (i64.const -1))
    (i32.store offset=4200 (i32.const 24576) (i32.const -1))
    (i64.store (i32.const 8192) (i64.const 0x2121656761627261))
    (memory.fill (i32.const 40000) (i32.const 0xab) (i32.const 5000))
    ;; host writes: the event, a timestamp, random bytes, args
    (i32.store (i32.const 0) (i32.const 50000))
    (i32.store (i32.const 4) (i32.const 4096))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 78000)))
    (drop (call $clock (i32.const 0) (i64.const 0) (i32.const 56000)))
    (drop (call $random (i32.const 62000) (i32.const 32)))
    (drop (call $args_sizes (i32.const 60200) (i32.const 60204)))
    (drop (call $args (i32.const 66000) (i32.const 70000)))
    ;; grown memory: grow once, then write into the new page on every call
    (if (i32.eq (memory.size) (i32.const 4)) (then (drop (memory.grow (i32.const 1)))))
    (i32.store8 (i32.const 262154) (i32.const 1))
    ;; "ok" on stdout (fd_write stores the count at 74000)
    (i32.store16 (i32.const 80) (i32.const 0x6b6f))
    (i32.store (i32.const 64) (i32.const 80))
    (i32.store (i32.const 68) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 64) (i32.const 1) (i32.const 74000)))
    (call $exit (i32.const 0))))
