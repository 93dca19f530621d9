;; Attack: alloc(-1) inside try/catch_all. It threw an ordinary JS exception
;; that catch_all swallowed, leaving the host's byte count negative, so later
;; allocations were free. Every unexpected host exception must be a halt.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (try (do (drop (call $alloc (i64.const -1)))) (catch_all))
    (i32.const 0)))
