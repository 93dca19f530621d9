;; Rewrites tool_input (Extism-native): output_set(modified_input object), returns 0.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (data (i32.const 64) "{\"modified_input\":{\"command\":\"ls -la\"}}")
  (func (export "hook") (result i32)
    (local $block i64) (local $i i32)
    (local.set $block (call $alloc (i64.const 39)))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (i32.const 39)))
        (call $store_u8 (i64.add (local.get $block) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (i32.const 64) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (call $output_set (local.get $block) (i64.const 39))
    (i32.const 0)))
