/**
 * Memory capping: rewrites each defined memory's maximum to the page cap.
 *
 * @module
 */

import { HookboxError } from "../errors.ts";
import type { ParsedModule } from "./_parse.ts";
import { Writer } from "./_writer.ts";
import { PAGE_SHIFT } from "./_writes.ts";

/**
 * Returns the new memory section payload (or null when there is none): each
 * memory's max becomes `min(declared max ?? cap, cap)`. A memory whose min
 * exceeds the cap throws `LIMIT_MEMORY`. With `pageMap`, a page map memory
 * for write tracking of memory 0 is appended: one byte per 4 KiB page of
 * memory 0's capped maximum, plus slack, fixed in size.
 */
export function capMemories(m: ParsedModule, cap: number, pageMap = false): Uint8Array | null {
  if (m.memories.length === 0) return null;
  const w = new Writer().u32(m.memories.length + (pageMap ? 1 : 0));
  m.memories.forEach((mem, i) => {
    if (mem.min > cap) {
      throw new HookboxError(
        "LIMIT_MEMORY",
        `memory ${i} needs ${mem.min} pages at start, the cap is ${cap} pages`,
      );
    }
    const max = Math.min(mem.max ?? cap, cap);
    w.u8(mem.flags | 1).u32(mem.min).u32(max);
  });
  if (pageMap) {
    const first = m.memories[0]!;
    const tracked = Math.min(first.max ?? cap, cap) * (65536 >> PAGE_SHIFT);
    const pages = Math.floor(tracked / 65536) + 1;
    w.u8(1).u32(pages).u32(pages);
  }
  return w.finish();
}
