;; Attack: sets a 128 KiB Extism output (over the tests' 64 KiB cap), then keeps setting it forever.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (local $block i64)
    (local.set $block (call $alloc (i64.const 131072)))
    (loop $flood
      (call $output_set (local.get $block) (i64.const 131072))
      (br $flood))
    (i32.const 0)))
