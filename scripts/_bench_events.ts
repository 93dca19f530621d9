/**
 * The pre-tool-call events the hook benchmarks share: a 1 KB one with a long
 * command line (tokenizers and regex scans grow with it) and a typical one.
 *
 * @module
 */

/** A pre-tool-call event for the shell command `command`, as JSON text. */
export function eventFor(command: string): string {
  return JSON.stringify({
    event_type: "pre-tool-call",
    timestamp: "2025-01-01T00:00:00Z",
    session_id: "bench",
    work_dir: "/work",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "t1",
  });
}

/** 1083 bytes: a long command line. */
export const LONG_EVENT: string = eventFor(
  "ls -la && git status --short && " + "echo x; ".repeat(10) + "#".repeat(800),
);

/** 189 bytes: `git status --short`. */
export const TYPICAL_EVENT: string = eventFor("git status --short");
