;; Extism HTTP (Extism-native): the event is an Extism request JSON
;; ({"url": ..., "method": ..., "headers": {...}}); the plugin passes the input
;; block to http_request as is, writes the response body to its output and
;; exits 0 when the status is 200, else 1.
(module
  (import "extism:host/env" "input_offset" (func $input_offset (result i64)))
  (import "extism:host/env" "http_request" (func $http_request (param i64 i64) (result i64)))
  (import "extism:host/env" "http_status_code" (func $http_status_code (result i32)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1)
  (func (export "hook") (result i32)
    (local $response i64)
    (local.set $response (call $http_request (call $input_offset) (i64.const 0)))
    (call $output_set (local.get $response) (call $length (local.get $response)))
    (if (result i32) (i32.eq (call $http_status_code) (i32.const 200))
      (then (i32.const 0))
      (else (i32.const 1)))))
