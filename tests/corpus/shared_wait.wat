;; Attack: a shared memory and a 5 s memory.atomic.wait32 that nothing can
;; wake: it blocks the thread that runs the guest, past any deadline.
(module
  (memory (export "memory") 1 1 shared)
  (func (export "_start")
    (drop (memory.atomic.wait32 (i32.const 0) (i32.const 0) (i64.const 5000000000)))))
