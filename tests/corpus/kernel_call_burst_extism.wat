;; Attack (frozen clock): a loop of the Extism kernel's cheap memory functions (load_u8, store_u8,
;; load_u64, input_load_u8, length), whose own instructions cost a few units of fuel each. They
;; were never charged: the host spent 40-110x more time per unit of fuel than on a plain loop.
;; Every kernel call costs fuel now, so a budget stops this before it finishes.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "load_u64" (func $load_u64 (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (local $block i64) (local $i i32)
    (local.set $block (call $alloc (i64.const 16)))
    (loop $again
      (call $store_u8 (local.get $block) (i32.const 1))
      (drop (call $load_u8 (local.get $block)))
      (drop (call $load_u64 (local.get $block)))
      (drop (call $length (local.get $block)))
      (drop (call $input_load_u8 (i64.const 0)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 200000))))
    (i32.const 0)))
