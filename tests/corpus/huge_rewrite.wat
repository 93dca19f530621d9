;; Attack: rewrites the tool input to a command of about 1,000,000 characters —
;; a valid answer that fits the default 1 MiB output cap. An agent's answer
;; carries a rewrite whole (it is what the tool runs), so it stays a megabyte
;; where a block's reason is cut for the model.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 17)
  (data (i32.const 64) "{\"modified_input\":{\"command\":\"")
  (func (export "_start")
    ;; 64..94: the head (30 bytes); 94..1000094: "x"; then "\"}}".
    (memory.fill (i32.const 94) (i32.const 120) (i32.const 1000000))
    (i32.store16 (i32.const 1000094) (i32.const 0x7d22))
    (i32.store8 (i32.const 1000096) (i32.const 0x7d))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 1000033))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
