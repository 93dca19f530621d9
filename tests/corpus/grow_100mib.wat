;; Attack on a shared isolate: grows its memory to 100 MiB in one step, writes
;; the last byte (so the pages are really used) and exits 0. Under a cap of
;; 128 MiB or more it succeeds; in an edge Worker, whose isolate has 128 MB for
;; every tenant's requests, it must be stopped as limit/memory instead.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (if (i32.eq (memory.grow (i32.const 1599)) (i32.const -1))
      (then (unreachable)))
    (i32.store8 (i32.const 104857599) (i32.const 1))))
