;; Attack: an invalid module whose loop function writes local 1 although it
;; declares only one local (index 0). The rewriter appends the fuel copy as the
;; next local, so without input validation this would reset fuel each turn.
(module
  (memory (export "memory") 1)
  (func (export "_start") (local i32)
    (loop $forever
      (local.set 1 (i64.const 1000000000))
      (br $forever))))
