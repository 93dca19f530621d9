;; Attack: wraps an infinite loop in try/catch_all and retries, hoping to
;; swallow whatever the host throws to stop it. The host stops calls with a
;; genuine trap, which wasm cannot catch.
(module
  (memory (export "memory") 1)
  (func $spin (loop $forever (br $forever)))
  (func (export "_start")
    (loop $again
      (try (do (call $spin)) (catch_all))
      (br $again))))
