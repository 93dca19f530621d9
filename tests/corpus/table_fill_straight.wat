;; Attack: straight-line table.fill of a 60,000-entry table, 64 times per
;; call of a loop-free function called from a loop-free function: the fills
;; are charged per element and each charge is a checked point.
(module
  (memory (export "memory") 1)
  (table $t 60000 60000 externref)
  (func $fill8
    (table.fill $t (i32.const 0) (ref.null extern) (i32.const 60000))
    (table.fill $t (i32.const 0) (ref.null extern) (i32.const 60000))
    (table.fill $t (i32.const 0) (ref.null extern) (i32.const 60000))
    (table.fill $t (i32.const 0) (ref.null extern) (i32.const 60000))
    (table.fill $t (i32.const 0) (ref.null extern) (i32.const 60000))
    (table.fill $t (i32.const 0) (ref.null extern) (i32.const 60000))
    (table.fill $t (i32.const 0) (ref.null extern) (i32.const 60000))
    (table.fill $t (i32.const 0) (ref.null extern) (i32.const 60000)))
  (func (export "_start")
    (call $fill8) (call $fill8) (call $fill8) (call $fill8)
    (call $fill8) (call $fill8) (call $fill8) (call $fill8)))
