;; Attack: memory.atomic.wait64 on an unshared memory (no shared flag to look
;; for): wait instructions are refused wherever they appear.
(module
  (memory (export "memory") 1)
  (func $idle (drop (memory.atomic.wait64 (i32.const 0) (i64.const 0) (i64.const -1))))
  (func (export "_start")))
