;; Probe: grows its memory by 10 pages on every call, as an allocator does when
;; a call needs more heap, and exits 0 when it could (3 when it could not).
;; Memory cannot shrink: a warm instance restored after such a call keeps the
;; grown pages while its state says they were never there, so reusing it would
;; grow again on every call until the cap. Under a 1 MiB cap every call must
;; still succeed: an instance whose memory grew is not reused.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (if (i32.eq (memory.grow (i32.const 10)) (i32.const -1))
      (then (unreachable)))))
