;; Benign guard, Extism-native ABI: same logic as guard_wasi.wat. Reads the
;; input through the kernel, returns 2 after error_set(reason) when it
;; contains "rm -rf", else 0.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u64" (func $input_load_u64 (param i64) (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  (memory (export "memory") 1)
  (data (i32.const 64) "rm -rf is not allowed")
  (func $read_input (result i32)
    (local $len i32) (local $i i32)
    (local.set $len (i32.wrap_i64 (call $input_length)))
    (if (i32.gt_u (local.get $len) (i32.const 64512)) (then (local.set $len (i32.const 64512))))
    (block $words_done
      (loop $words
        (br_if $words_done (i32.gt_u (i32.add (local.get $i) (i32.const 8)) (local.get $len)))
        (i64.store (i32.add (i32.const 1024) (local.get $i))
          (call $input_load_u64 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 8)))
        (br $words)))
    (block $bytes_done
      (loop $bytes
        (br_if $bytes_done (i32.ge_u (local.get $i) (local.get $len)))
        (i32.store8 (i32.add (i32.const 1024) (local.get $i))
          (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bytes)))
    (local.get $len))
  ;; One pass: at each position compare "rm -" (i32) and "rf" (i16), unaligned loads.
  (func $contains (param $len i32) (result i32)
    (local $i i32)
    (block $done
      (loop $scan
        (br_if $done (i32.gt_s (i32.add (local.get $i) (i32.const 6)) (local.get $len)))
        (if (i32.and
              (i32.eq (i32.load (i32.add (i32.const 1024) (local.get $i))) (i32.const 0x2d206d72))
              (i32.eq (i32.load16_u (i32.add (i32.const 1028) (local.get $i))) (i32.const 0x6672)))
          (then (return (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i32.const 0))
  (func $to_block (param $ptr i32) (param $len i32) (result i64)
    (local $block i64) (local $i i32)
    (local.set $block (call $alloc (i64.extend_i32_u (local.get $len))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (call $store_u8 (i64.add (local.get $block) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $ptr) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (local.get $block))
  (func (export "hook") (result i32)
    (if (call $contains (call $read_input))
      (then
        (call $error_set (call $to_block (i32.const 64) (i32.const 21)))
        (return (i32.const 2))))
    (i32.const 0)))
