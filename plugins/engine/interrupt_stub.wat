;; Stand-in for the host's `hookbox.should_interrupt` while Wizer snapshots the
;; engine (the init function never calls it; Wizer only needs the import bound).
(module
  (func (export "should_interrupt") (result i32)
    i32.const 0))
