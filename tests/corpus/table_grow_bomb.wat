;; Attack: a table with no declared maximum grown by a million entries per
;; turn; table.grow used to cost one unit whatever its delta.
(module
  (memory (export "memory") 1)
  (table $t 1 externref)
  (func (export "_start")
    (loop $more
      (if (i32.eq (table.grow $t (ref.null extern) (i32.const 1000000)) (i32.const -1))
        (then (unreachable)))
      (br $more))))
