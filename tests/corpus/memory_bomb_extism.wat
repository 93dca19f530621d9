;; Attack: grows linear memory until memory.grow fails, then returns 1, like a
;; program that handles malloc failure by exiting with an error (Extism-native).
(module
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (loop $grow
      (br_if $grow (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    (i32.const 1)))
