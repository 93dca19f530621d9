;; Attack: more tables than any plugin needs (each one a host allocation).
(module
  (memory (export "memory") 1)
  (table 1 funcref) (table 1 funcref) (table 1 funcref) (table 1 funcref)
  (table 1 funcref) (table 1 funcref) (table 1 funcref) (table 1 funcref)
  (table 1 funcref) (table 1 funcref) (table 1 funcref) (table 1 funcref)
  (table 1 funcref) (table 1 funcref) (table 1 funcref) (table 1 funcref)
  (table 1 funcref)
  (func (export "_start")))
