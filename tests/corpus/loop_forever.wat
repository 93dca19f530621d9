;; Attack: a tight infinite loop with no host calls. Stopped by fuel.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever (br $forever))))
