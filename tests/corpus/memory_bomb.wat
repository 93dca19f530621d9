;; Attack: grows linear memory until memory.grow fails, then traps like an
;; allocator that aborts on out-of-memory.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $grow
      (br_if $grow (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    (unreachable)))
