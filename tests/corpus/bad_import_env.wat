;; Attack: imports an arbitrary host function from a namespace we do not serve.
(module
  (import "env" "system" (func $system (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (call $system (i32.const 0)))))
