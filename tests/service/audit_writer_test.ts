/**
 * `AuditWriter`: a lone row is committed at once; while other dispatches have
 * announced rows, a commit waits one turn of the loop so they share it.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { AuditWriter, TenantGone } from "../../packages/service/audit.ts";
import type { AuditRow, Store } from "../../packages/store/store.ts";

function recordingStore() {
  const commits: string[][] = [];
  const store = {
    appendAudit: (rows: AuditRow[]) => {
      commits.push(rows.map((r) => r.decision_id));
      return Promise.resolve();
    },
  } as unknown as Store;
  return { commits, store };
}

const row = (id: string) =>
  ({ decision_id: id, session_id: "s", reason: null, hooks: [] }) as unknown as AuditRow;

Deno.test("AuditWriter commits a lone row at once: a row written just after gets its own commit", async () => {
  const { commits, store } = recordingStore();
  const audit = new AuditWriter(store);
  const a = audit.write(row("a"));
  await Promise.resolve();
  const b = audit.write(row("b"));
  await Promise.all([a, b]);
  assertEquals(commits, [["a"], ["b"]]);
});

Deno.test("AuditWriter.expect(): while a row is announced, a commit waits a turn and carries it", async () => {
  const { commits, store } = recordingStore();
  const audit = new AuditWriter(store);
  const settle = audit.expect();
  const a = audit.write(row("a"));
  await Promise.resolve();
  settle();
  settle(); // settling twice counts once
  const b = audit.write(row("b"));
  await Promise.all([a, b]);
  assertEquals(commits, [["a", "b"]]);
  // Nothing announced any more: the next rows go one by one again.
  const c = audit.write(row("c"));
  await Promise.resolve();
  const d = audit.write(row("d"));
  await Promise.all([c, d]);
  assertEquals(commits.slice(1), [["c"], ["d"]]);
});

Deno.test("AuditWriter: a row the store refuses fails only its own write; the rest of the batch commits", async () => {
  const commits: string[][] = [];
  const store = {
    appendAudit: (rows: AuditRow[]) => {
      if (rows.some((r) => r.decision_id === "poison")) {
        return Promise.reject(new Error("invalid byte sequence for encoding UTF8: 0x00"));
      }
      commits.push(rows.map((r) => r.decision_id));
      return Promise.resolve();
    },
  } as unknown as Store;
  const audit = new AuditWriter(store);
  const settle = audit.expect();
  const writes = ["a", "poison", "b"].map((id) => audit.write(row(id)));
  settle();
  const outcomes = await Promise.allSettled(writes);
  assertEquals(outcomes.map((o) => o.status), ["fulfilled", "rejected", "fulfilled"]);
  assertEquals(commits, [["a"], ["b"]]);
});

Deno.test("AuditWriter: a row whose tenant is gone is rejected with TenantGone, the others commit", async () => {
  const store = {
    appendAudit: (rows: AuditRow[]) =>
      Promise.resolve(rows.filter((r) => r.tenant_id === "gone").map((r) => r.decision_id)),
  } as unknown as Store;
  const audit = new AuditWriter(store);
  const settle = audit.expect();
  const writes = [row("a"), { ...row("b"), tenant_id: "gone" }].map((r) => audit.write(r));
  settle();
  const outcomes = await Promise.allSettled(writes);
  assertEquals(outcomes[0]!.status, "fulfilled");
  assertEquals(
    outcomes[1]!.status === "rejected" && outcomes[1]!.reason instanceof TenantGone,
    true,
  );
  assertEquals(audit.committed, 1);
});

Deno.test("AuditWriter: a small row commits while a big row's commit is still in flight", async () => {
  const order: string[] = [];
  let release = () => {};
  const store = {
    appendAudit: (rows: AuditRow[]) => {
      const ids = rows.map((r) => r.decision_id).join(",");
      order.push(`commit ${ids}`);
      if (!ids.startsWith("big")) return Promise.resolve([]);
      return new Promise<string[]>((resolve) => release = () => resolve([]));
    },
  } as unknown as Store;
  const audit = new AuditWriter(store);
  const written = (r: AuditRow) =>
    audit.write(r).then(() => order.push(`settled ${r.decision_id}`));
  const big = written({ ...row("big"), reason: "x".repeat(1 << 20) });
  await new Promise((resolve) => setTimeout(resolve, 5));
  assertEquals(order, ["commit big"]);
  await written(row("small"));
  assertEquals(order, ["commit big", "commit small", "settled small"]);
  const flushed = audit.flush().then(() => order.push("flushed"));
  release();
  await Promise.all([big, flushed]);
  assertEquals(order.slice(3), ["settled big", "flushed"]);
});

Deno.test("AuditWriter: big rows are committed about 256 KiB at a time", async () => {
  const { commits, store } = recordingStore();
  const audit = new AuditWriter(store);
  const rows = ["a", "b", "c"].map((id) => ({ ...row(id), reason: "x".repeat(100_000) }));
  await Promise.all(rows.map((r) => audit.write(r)));
  assertEquals(commits, [["a", "b"], ["c"]]);
});
