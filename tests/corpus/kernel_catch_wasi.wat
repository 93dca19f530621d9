;; Attack: a WASI command (no Extism `hook` export) that also imports the
;; Extism kernel, makes the SDK's own `load_u64` throw (offset 4096 of block
;; 0, the SDK's 1-byte placeholder) inside try/catch_all, swallows it and exits 0 as if
;; nothing happened. The runtime builds host functions only for what a module
;; imports: the kernel must still be shielded for a module like this one, so
;; the fault is an uncatchable halt, not an exception the guest can catch.
(module
  (import "extism:host/env" "load_u64" (func $load_u64 (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "_start")
    (try (do (drop (call $load_u64 (i64.const 4096)))) (catch_all))))
