;; Attack: spins forever on an Extism host call (log_info), so the time goes
;; to the host rather than to metered guest code. Stopped by the deadline.
(module
  (import "extism:host/env" "log_info" (func $log_info (param i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (loop $forever
      (call $log_info (i64.const 0))
      (br $forever))
    (i32.const 0)))
