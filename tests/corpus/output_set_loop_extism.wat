;; Attack (frozen clock): sets the same 32 KiB Extism output 2,000 times — each
;; under the output cap, and output_set replaces rather than appends, so no
;; size limit is reached — then returns 0. Each call makes the host copy 32 KiB:
;; charged as one host call only, 2,000 calls cost about 1.2 million units for
;; 64 MiB of host copying. Charged per byte, they need over 190 million: under
;; a 10 million budget the loop is stopped with limit/fuel instead.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (local $block i64)
    (local $i i32)
    (local.set $block (call $alloc (i64.const 32768)))
    (loop $again
      (call $output_set (local.get $block) (i64.const 32768))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 2000))))
    (i32.const 0)))
