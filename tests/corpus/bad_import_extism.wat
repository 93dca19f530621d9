;; Attack: an Extism-native plugin importing a host function from the
;; `extism:host/user` namespace, which hookbox does not serve.
(module
  (import "extism:host/user" "exec" (func $exec (param i64) (result i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (drop (call $exec (i64.const 0)))
    (i32.const 0)))
