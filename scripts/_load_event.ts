/**
 * The event `scripts/load.ts` sends as its `i`-th request: a shell call, one
 * in ten of them `rm -rf /` (blocked by the tenants' guards).
 *
 * @module
 */

/** The `i`-th load event. */
export function loadEvent(i: number): Record<string, unknown> {
  return {
    event_type: "pre-tool-call",
    session_id: `s${i % 50}`,
    tool_name: "Bash",
    tool_input: { command: i % 10 === 0 ? "rm -rf /" : `ls -la /tmp/${i}` },
  };
}
