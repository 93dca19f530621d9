;; hookbox: the warm-snapshot restorer (src/runtime/wasm/_restore.ts holds the
;; assembled bytes; tests/runtime/restore_module_test.ts keeps the two equal).
;;
;; `restore` walks the block map of a warm instance (one byte per block of
;; 2^shift bytes of its memory, set by the instrumented stores and by host
;; writes), and for every run of marked blocks copies the pristine bytes back
;; from the image (plus `straddle` bytes past the run, which a store that
;; began in its last block may have reached), zero-fills what lies past the
;; image (memory grown since the snapshot) and clears the marks. Clear marks
;; are skipped eight at a time.
(module
  (import "h" "live" (memory $live 0))
  (import "h" "map" (memory $map 0))
  (import "h" "image" (memory $image 0))
  (func (export "restore")
    (param $blocks i32) (param $shift i32) (param $straddle i32)
    (param $imageLen i32) (param $liveLen i32)
    (local $i i32) (local $j i32) (local $from i32) (local $to i32) (local $mid i32)
    (block $done
      (loop $scan
        (br_if $done (i32.ge_u (local.get $i) (local.get $blocks)))
        (if (i32.le_u (i32.add (local.get $i) (i32.const 8)) (local.get $blocks))
          (then
            (if (i64.eqz (i64.load $map (local.get $i)))
              (then
                (local.set $i (i32.add (local.get $i) (i32.const 8)))
                (br $scan)))))
        (if (i32.eqz (i32.load8_u $map (local.get $i)))
          (then
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $scan)))
        ;; marked blocks [i, j)
        (local.set $j (i32.add (local.get $i) (i32.const 1)))
        (block $end
          (loop $run
            (br_if $end (i32.ge_u (local.get $j) (local.get $blocks)))
            (br_if $end (i32.eqz (i32.load8_u $map (local.get $j))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $run)))
        (memory.fill $map (local.get $i) (i32.const 0) (i32.sub (local.get $j) (local.get $i)))
        ;; bytes [from, to) of the live memory; [from, mid) come from the image
        (local.set $from (i32.shl (local.get $i) (local.get $shift)))
        (local.set $to
          (i32.add (i32.shl (local.get $j) (local.get $shift)) (local.get $straddle)))
        (if (i32.gt_u (local.get $to) (local.get $liveLen))
          (then (local.set $to (local.get $liveLen))))
        (local.set $mid (local.get $to))
        (if (i32.gt_u (local.get $mid) (local.get $imageLen))
          (then (local.set $mid (local.get $imageLen))))
        (if (i32.lt_u (local.get $from) (local.get $mid))
          (then
            (memory.copy $live $image
              (local.get $from) (local.get $from) (i32.sub (local.get $mid) (local.get $from)))))
        (if (i32.gt_u (local.get $to) (local.get $imageLen))
          (then
            (if (i32.lt_u (local.get $from) (local.get $imageLen))
              (then (local.set $from (local.get $imageLen))))
            (memory.fill $live (local.get $from) (i32.const 0)
              (i32.sub (local.get $to) (local.get $from)))))
        (local.set $i (local.get $j))
        (br $scan)))))
