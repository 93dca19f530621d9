;; Attack: a callee burns fuel in a loop, then throws; the caller catches it
;; with a try_table clause and retries forever. Catching used to restore the
;; caller's stale fuel copy, refunding everything the callee spent.
(module
  (tag $t)
  (memory (export "memory") 1)
  (func $burn (local $i i32)
    (loop $spin
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $spin (i32.lt_u (local.get $i) (i32.const 50000))))
    (throw $t))
  (func (export "_start")
    (loop $again
      (block $caught
        (try_table (catch_all $caught) (call $burn)))
      (br $again))))
