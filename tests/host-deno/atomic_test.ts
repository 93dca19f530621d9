/**
 * Cache and index files are written whole or not at all, and a failed write
 * leaves no temporary file behind in the cache folder.
 */
import assert from "node:assert/strict";
import { writeAtomic, writeAtomicSync } from "../../packages/host-deno/atomic.ts";
import { tempDir } from "../_helpers.ts";

Deno.test("writeAtomic() replaces a file whole, creates its folders, and cleans up when it fails", async () => {
  const dir = await tempDir("hookbox-atomic-");
  try {
    await writeAtomic(`${dir}/a/b/entry.json`, '{"v":1}', { parents: true });
    await writeAtomic(`${dir}/a/b/entry.json`, new TextEncoder().encode('{"v":2}'));
    assert.equal(await Deno.readTextFile(`${dir}/a/b/entry.json`), '{"v":2}');
    writeAtomicSync(`${dir}/c/entry.json`, "sync", { parents: true });
    assert.equal(await Deno.readTextFile(`${dir}/c/entry.json`), "sync");
    // A folder where the file should go: the rename fails, and nothing is left beside it.
    await Deno.mkdir(`${dir}/d/entry.json`, { recursive: true });
    await assert.rejects(writeAtomic(`${dir}/d/entry.json`, "x"));
    assert.throws(() => writeAtomicSync(`${dir}/d/entry.json`, "x"));
    const left = [...Deno.readDirSync(`${dir}/d`)].map((e) => e.name);
    assert.deepEqual(left, ["entry.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
