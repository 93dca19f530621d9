/**
 * Memory capping: rewrites each defined memory's maximum to the page cap.
 *
 * @module
 */

import { HookboxError } from "../errors.ts";
import type { ParsedModule } from "./_parse.ts";
import { Writer } from "./_writer.ts";

/**
 * Returns the new memory section payload (or null when there is none): each
 * memory's max becomes `min(declared max ?? cap, cap)`. A memory whose min
 * exceeds the cap throws `LIMIT_MEMORY`.
 */
export function capMemories(m: ParsedModule, cap: number): Uint8Array | null {
  if (m.memories.length === 0) return null;
  const w = new Writer().u32(m.memories.length);
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
  return w.finish();
}
