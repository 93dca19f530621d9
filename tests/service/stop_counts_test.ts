/**
 * The stop gate's budget in the service (`packages/service/stop_counts.ts`):
 * bounded in memory, and one tenant's sessions cannot make another's count
 * start again.
 */
import assert from "node:assert/strict";
import { MAX_SESSIONS, StopCounts } from "../../packages/service/stop_counts.ts";

/** A first stop, then `retries` retries of `tenant`'s session: the counts given. */
function bounce(stops: StopCounts, tenant: string, session: string, retries: number): number[] {
  const counts = [stops.next(tenant, "claude-code", session, false)];
  for (let i = 0; i < retries; i++) counts.push(stops.next(tenant, "claude-code", session, true));
  return counts;
}

Deno.test("a tenant's stream of new sessions cannot reset another tenant's stop count", () => {
  const stops = new StopCounts();
  assert.deepEqual(bounce(stops, "globex", "victim", 2), [0, 1, 2]);
  // Twice the bound of new sessions, each bounced once, all from one tenant.
  for (let i = 0; i < 2 * MAX_SESSIONS; i++) bounce(stops, "acme", `s${i}`, 1);
  assert.equal(stops.size, MAX_SESSIONS);
  // The victim's agent is let go at its gate's limit, not sent back to work for ever.
  assert.equal(stops.next("globex", "claude-code", "victim", true), 3);
  // The flooding tenant forgot its own oldest sessions and kept its newest.
  assert.equal(stops.next("acme", "claude-code", "s0", true), 1);
  assert.equal(stops.next("acme", "claude-code", `s${2 * MAX_SESSIONS - 1}`, true), 2);
});

Deno.test("past the bound, the tenant remembering the most sessions forgets its oldest first", () => {
  const stops = new StopCounts();
  // Three tenants below their even share, one far above it.
  for (const tenant of ["a", "b", "c"]) bounce(stops, tenant, "kept", 1);
  for (let i = 0; i < MAX_SESSIONS - 3; i++) bounce(stops, "big", `s${i}`, 0);
  assert.equal(stops.size, MAX_SESSIONS);
  // New sessions of the small tenants push out the big one's oldest, not each other's.
  for (let i = 0; i < 100; i++) bounce(stops, "abc"[i % 3]!, `new${i}`, 0);
  assert.equal(stops.size, MAX_SESSIONS);
  for (const tenant of ["a", "b", "c"]) {
    assert.equal(stops.next(tenant, "claude-code", "kept", true), 2, tenant);
  }
  assert.equal(stops.next("big", "claude-code", "s0", true), 1, "the big tenant's oldest is gone");
  assert.equal(stops.next("big", "claude-code", `s${MAX_SESSIONS - 4}`, true), 1);
});

Deno.test("the same session id under another agent or tenant counts on its own", () => {
  const stops = new StopCounts();
  assert.deepEqual(bounce(stops, "acme", "s", 2), [0, 1, 2]);
  assert.equal(stops.next("acme", "gemini-cli", "s", true), 1);
  assert.equal(stops.next("globex", "claude-code", "s", true), 1);
  assert.equal(stops.next("acme", "claude-code", "s", true), 3);
});
