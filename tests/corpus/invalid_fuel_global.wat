;; Attack: an invalid module that writes global 0 although it declares no
;; globals. The rewriter appends the fuel counter as the first global, so
;; without validating the input first this would refill its own fuel forever.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever
      (global.set 0 (i64.const 1000000000))
      (br $forever))))
