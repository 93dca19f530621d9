/**
 * The core executor keeps what it scanned, but not without bound: events name
 * their own work dirs (an agent platform passes whatever the agent says), so
 * a long-running executor must not keep one scan per project folder ever seen.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { createCoreExecutor } from "../../../packages/core/executor.ts";
import type { HostFs } from "../../../packages/core/host.ts";

/** A file system with no hooks anywhere that counts the scans of each project folder. */
function countingFs(): { fs: HostFs; scans: Map<string, number> } {
  const scans = new Map<string, number>();
  const fs: HostFs = {
    stat(path) {
      if (path.endsWith("/.agents/hooks")) scans.set(path, (scans.get(path) ?? 0) + 1);
      return Promise.resolve(null);
    },
    readDir: () => Promise.reject(new Error("no folders")),
    readTextFile: () => Promise.reject(new Error("no files")),
    readFile: () => Promise.reject(new Error("no files")),
    realPath: (path) => Promise.resolve(path),
  };
  return { fs, scans };
}

const event = (workDir: string) => ({
  event_type: "pre-tool-call",
  session_id: "s",
  tool_name: "Bash",
  tool_input: {},
  work_dir: workDir,
});

Deno.test("a project folder is scanned once while recent, and forgotten after 256 others", async () => {
  const { fs, scans } = countingFs();
  const executor = createCoreExecutor({ fs, runtimes: {} });
  await executor.dispatch(event("/w/first"));
  await executor.dispatch(event("/w/first"));
  assertEquals(scans.get("/w/first/.agents/hooks"), 1, "kept while recent");
  for (let i = 0; i < 300; i++) await executor.dispatch(event(`/w/p${i}`));
  await executor.dispatch(event("/w/first"));
  assertEquals(scans.get("/w/first/.agents/hooks"), 2, "scanned again: nothing kept it");
  assertEquals(scans.get("/w/p299/.agents/hooks"), 1);
  await executor.close();
});

Deno.test("a platform scan that fails before any call is reported to the calls, not the process", async () => {
  const failing = new Error("platform folder unreadable");
  let scanned = false;
  const executor = createCoreExecutor({
    fs: countingFs().fs,
    runtimes: {},
    platformDirs: ["/platform"],
    scan: () => {
      scanned = true;
      return Promise.reject(failing);
    },
  });
  // No call awaits the scan before close: an unhandled rejection here fails this test.
  await executor.close();
  assertEquals(scanned, true);
  const again = createCoreExecutor({
    fs: countingFs().fs,
    runtimes: {},
    platformDirs: ["/platform"],
    scan: () => Promise.reject(failing),
  });
  let thrown: unknown;
  await again.hooks().catch((err) => thrown = err);
  assertEquals(thrown, failing);
  await again.close();
});
