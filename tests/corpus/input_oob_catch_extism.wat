;; Attack: reads the input far past its end inside try/catch_all, swallowing
;; the host's RangeError, then answers "allow" as if nothing happened.
(module
  (import "extism:host/env" "input_load_u64" (func $load (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (try (do (drop (call $load (i64.const -8)))) (catch_all))
    (try (do (drop (call $load_u8 (i64.const 0x00ffffffffffffff)))) (catch_all))
    (i32.const 0)))
