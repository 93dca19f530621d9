;; Attack: infinite loop in an Extism-native `hook` export. Stopped by fuel.
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (drop (call $input_length))
    (loop $forever (br $forever))
    (i32.const 0)))
