;; Attack: sleeps forever through poll_oneoff clock subscriptions (which
;; cannot block on a thread-less host). Stopped by the deadline.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    ;; subscription at 0: userdata 0, tag 0 (clock), monotonic, timeout 1 s
    (i32.store8 (i32.const 8) (i32.const 0))
    (i32.store (i32.const 16) (i32.const 1))
    (i64.store (i32.const 24) (i64.const 1000000000))
    (loop $forever
      (drop (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128)))
      (br $forever))))
