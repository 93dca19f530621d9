;; Attack: _initialize reads the input and keeps it; a warm snapshot taken
;; after it carried the first caller's event into every later session. The
;; hook answers with the input length its initialisation saw (must be 0).
(module
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (memory (export "memory") 1)
  (func (export "_initialize")
    (i64.store (i32.const 0) (call $input_length)))
  (func (export "hook") (result i32)
    (i32.wrap_i64 (i64.load (i32.const 0)))))
