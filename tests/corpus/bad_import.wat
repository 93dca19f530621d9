;; Attack: imports a socket function the host does not emulate.
(module
  (import "wasi_snapshot_preview1" "sock_accept" (func $accept (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (call $accept (i32.const 3) (i32.const 0) (i32.const 0)))))
