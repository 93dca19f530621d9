;; Attack: memory.fill of 64 MiB, 8 per loop-free function, called 8 times
;; from a loop-free function and that one 8 times again: 512 fills (32 GiB of
;; writes) with no loop header or function entry between most of them.
(module
  (memory (export "memory") 1024 1024)
  (func $fill8
    (memory.fill (i32.const 0) (i32.const 1) (i32.const 67108864))
    (memory.fill (i32.const 0) (i32.const 2) (i32.const 67108864))
    (memory.fill (i32.const 0) (i32.const 3) (i32.const 67108864))
    (memory.fill (i32.const 0) (i32.const 4) (i32.const 67108864))
    (memory.fill (i32.const 0) (i32.const 5) (i32.const 67108864))
    (memory.fill (i32.const 0) (i32.const 6) (i32.const 67108864))
    (memory.fill (i32.const 0) (i32.const 7) (i32.const 67108864))
    (memory.fill (i32.const 0) (i32.const 8) (i32.const 67108864)))
  (func $fill64
    (call $fill8) (call $fill8) (call $fill8) (call $fill8)
    (call $fill8) (call $fill8) (call $fill8) (call $fill8))
  (func (export "_start")
    (call $fill64) (call $fill64) (call $fill64) (call $fill64)
    (call $fill64) (call $fill64) (call $fill64) (call $fill64)))
