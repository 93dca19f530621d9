;; Bug: starts with 1 MiB of memory (the smallest cap hookbox allows) and reads
;; past its end. Memory sits at the cap, but no grow failed: a trap, not a
;; memory limit.
(module
  (memory (export "memory") 16)
  (func (export "_start")
    (drop (i32.load (i32.const 1048576)))))
