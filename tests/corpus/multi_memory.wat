;; Attack: four memories, each asking for the whole cap, to get four times
;; the memory limit (and a second memory the warm snapshot never restored).
(module
  (memory (export "memory") 1)
  (memory $b 1)
  (memory $c 1)
  (memory $d 1)
  (func (export "_start")
    (drop (memory.grow $b (i32.const 4096)))
    (drop (memory.grow $c (i32.const 4096)))
    (drop (memory.grow $d (i32.const 4096)))))
