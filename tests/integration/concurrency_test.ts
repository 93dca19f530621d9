/**
 * Many tenants at once on one executor: runaway plugins of one tenant and a
 * benign guard of another, dispatched concurrently. Every call must get its
 * own right answer; nothing is lost or mixed up between tenants.
 */
import assert from "node:assert/strict";
import { createExecutor } from "../../packages/hookbox/deno.ts";
import { tempTree } from "../_helpers.ts";
import { pluginBytes, toolCall, writePluginHook } from "./_plugins.ts";

Deno.test("`dispatch()` keeps concurrent tenants apart while one of them runs runaway plugins", async () => {
  await using tree = await tempTree();
  const hooks = await tree.dir("hooks");
  await writePluginHook(hooks, "runaway", await pluginBytes("loop_forever"), {
    matcher: { tool: "^Loop$" },
    limits: { fuel: 2_000_000 },
  });
  await writePluginHook(hooks, "guard", await pluginBytes("guard_wasi"), {
    matcher: { tool: "^Bash$" },
    isolation: "warm",
  });
  await writePluginHook(hooks, "rewrite", await pluginBytes("rewrite_extism"), {
    matcher: { tool: "^Edit$" },
    isolation: "warm",
  });
  const executor = createExecutor({ projectDir: hooks, userDir: null });
  try {
    const calls = Array.from({ length: 60 }, (_, i) => {
      const kind = i % 3;
      if (kind === 0) {
        return executor.dispatch(toolCall("spin", "Loop"), { tenantId: "a" })
          .then((r) => ({ i, kind, r, command: "spin" }));
      }
      const command = i % 2 === 0 ? "rm -rf /" : `ls ${i}`;
      const tool = kind === 1 ? "Bash" : "Edit";
      return executor.dispatch(toolCall(command, tool), { tenantId: `t${i % 5}` })
        .then((r) => ({ i, kind, r, command }));
    });
    const results = await Promise.all(calls);
    assert.equal(results.length, 60);
    for (const { i, kind, r, command } of results) {
      const record = r.hooks[0]!;
      if (kind === 0) {
        assert.equal(r.decision, "allow", `call ${i}: fail open`);
        assert.deepEqual([record.name, record.outcome], ["runaway", "limit"]);
        assert.match(record.detail ?? "", /^fuel: \d+ instructions \(limits\.fuel in HOOK\.md/);
      } else if (kind === 1) {
        const blocked = command.startsWith("rm");
        assert.equal(r.decision, blocked ? "block" : "allow", `call ${i} (${command})`);
        assert.equal(record.outcome, blocked ? "block" : "ok");
      } else {
        assert.equal(record.name, "rewrite");
        assert.equal(record.outcome, "ok", `call ${i}: ${record.detail}`);
        assert.deepEqual(r.modified_input, { command: "ls -la" }, `call ${i}`);
      }
    }
  } finally {
    await executor.close();
  }
});
