;; Attack: allocates zero-byte Extism blocks forever. Each costs the host its bookkeeping, which
;; was never counted (gigabytes held under memory_mb: 1, stopped only by fuel). Each block now
;; counts BLOCK_OVERHEAD bytes against the memory cap, and a call has at most MAX_BLOCKS.
(module
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (loop $more
      (drop (call $alloc (i64.const 0)))
      (br $more))
    (i32.const 0)))
