/**
 * Event builders for the built-in hook case tables.
 *
 * @module
 */

/** A pre-tool-call event for a shell tool. */
export function shellEvent(command: unknown, tool = "Bash"): Record<string, unknown> {
  return {
    event_type: "pre-tool-call",
    timestamp: "2025-01-15T10:30:00Z",
    session_id: "sess-1",
    work_dir: "/home/user/project",
    tool_name: tool,
    tool_input: { command },
    tool_use_id: "tool-1",
  };
}

/** A post-tool-call event with `output` as `tool_output`. */
export function outputEvent(output: unknown, tool = "Read"): Record<string, unknown> {
  return {
    event_type: "post-tool-call",
    timestamp: "2025-01-15T10:30:00Z",
    session_id: "sess-1",
    work_dir: "/home/user/project",
    tool_name: tool,
    tool_input: {},
    tool_use_id: "tool-1",
    tool_output: output,
  };
}
