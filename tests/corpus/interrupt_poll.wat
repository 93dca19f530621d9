;; Engine-style cooperative interrupt (what the QuickJS engine does): spins,
;; polling hookbox.should_interrupt, and unwinds gracefully when it says 1.
(module
  (import "hookbox" "should_interrupt" (func $should_interrupt (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "interrupted")
  (func (export "_start")
    (loop $spin
      (br_if $spin (i32.eqz (call $should_interrupt))))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 11))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
