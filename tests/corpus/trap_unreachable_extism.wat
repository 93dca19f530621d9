;; Attack/bug: an Extism-native `hook` that traps with `unreachable` after
;; setting its output.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (local $block i64)
    (local.set $block (call $alloc (i64.const 1)))
    (call $store_u8 (local.get $block) (i32.const 33))
    (call $output_set (local.get $block) (i64.const 1))
    (unreachable)))
