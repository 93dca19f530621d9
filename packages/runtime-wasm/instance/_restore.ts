/**
 * The warm-snapshot restorer: a small WebAssembly module (source:
 * `_restore.wat` next to this file) that copies the blocks a call wrote back
 * from the pristine image. Copying in WebAssembly instead of one
 * `Uint8Array.set` per run lets the block map be fine (256-byte blocks): a
 * call to a JS hook writes a few bytes in many places (reference counts,
 * allocator headers), and restoring 4 KiB pages copied about six times more
 * than was written.
 *
 * It needs multi-memory, as write tracking itself does: it is only compiled
 * for a plugin whose writes are tracked.
 *
 * @module
 */

import { base64Bytes } from "../../core/bytes.ts";

const BASE64 =
  "AGFzbQEAAAABCQFgBX9/f39/AAIfAwFoBGxpdmUCAAABaANtYXACAAABaAVpbWFnZQIAAAMCAQAHCwEHcmVzdG9yZQAA" +
  "Ct8BAdwBAQV/AkADQCAFIABPDQEgBUEIaiAATQRAIAUpQwEAUARAIAVBCGohBQwCCwsgBS1AAQBFBEAgBUEBaiEFDAEL" +
  "IAVBAWohBgJAA0AgBiAATw0BIAYtQAEARQ0BIAZBAWohBgwACwsgBUEAIAYgBWv8CwEgBSABdCEHIAYgAXQgAmohCCAI" +
  "IARLBEAgBCEICyAIIQkgCSADSwRAIAMhCQsgByAJSQRAIAcgByAJIAdr/AoAAgsgCCADSwRAIAcgA0kEQCADIQcLIAdB" +
  "ACAIIAdr/AsACyAGIQUMAAsLCw==";

/** The restorer module's bytes (`_restore.wat`, assembled). */
export const RESTORE_MODULE_BYTES: Uint8Array = base64Bytes(BASE64);

/**
 * Restores the marked blocks of `live` from `image` and clears their marks:
 * `blocks` marks are read, a block is `2 ** shift` bytes and a mark also covers
 * `straddle` bytes of the next block; bytes at or past `imageLength` become 0.
 */
export type Restorer = (
  blocks: number,
  shift: number,
  straddle: number,
  imageLength: number,
  liveLength: number,
) => void;

/** A restorer bound to one instance's memory and block map and its plugin's image. */
export function restorerFor(
  module: WebAssembly.Module,
  live: WebAssembly.Memory,
  map: WebAssembly.Memory,
  image: WebAssembly.Memory,
): Restorer {
  const instance = new WebAssembly.Instance(module, { h: { live, map, image } });
  return instance.exports.restore as Restorer;
}
