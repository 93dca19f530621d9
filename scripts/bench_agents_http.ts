/**
 * The HTTP form of the agent adapters (issue 11): Claude Code's PreToolUse
 * payload POSTed to `hookbox serve` at `/v1/agents/claude-code/events`, with
 * the built-in hooks installed as platform hooks, sequentially over loopback
 * — next to the same event in §1 form at `/v1/events` and `/healthz` (the
 * floor: HTTP and the service's middleware), in interleaved rounds; p50, p99
 * and ratios. The server runs as its own process on a throwaway SQLite store.
 *
 *   deno run -A scripts/bench_agents_http.ts [--events 2000]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { builtinHookUploads } from "./_builtin_hooks.ts";
import { call, startServe } from "./_serve_process.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { events: { type: "string", default: "2000" } },
});
const EVENTS = Number(values.events);
const ADMIN = "bench-admin-key-0123456789abcdef";
const dir = await Deno.makeTempDir({ prefix: "hookbox-bench-http-" });
const server = await startServe({ db: `sqlite:${dir}/hookbox.db`, adminKey: ADMIN });
try {
  for (const { name, files } of await builtinHookUploads()) {
    const up = await call(server.url, "PUT", `/v1/platform/hooks/${name}`, ADMIN, { files });
    if (up.status !== 201) throw new Error(`${name}: ${JSON.stringify(up.body)}`);
  }
  await call(server.url, "POST", "/v1/tenants", ADMIN, { id: "bench" });
  const { key } = (await call(server.url, "POST", "/v1/tenants/bench/keys", ADMIN, {})).body;
  const claude = (command: string) =>
    JSON.stringify({
      session_id: "s1",
      cwd: "/tmp",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command },
      tool_use_id: "t1",
    });
  const native = (command: string) =>
    JSON.stringify({
      event_type: "pre-tool-call",
      session_id: "s1",
      tool_name: "Bash",
      tool_input: { command },
    });
  const paths: Record<string, [string, string | null, "GET" | "POST"]> = {
    "claude-code allow (git status)": [
      "/v1/agents/claude-code/events",
      claude("git status"),
      "POST",
    ],
    "claude-code deny (rm -rf /)": ["/v1/agents/claude-code/events", claude("rm -rf /"), "POST"],
    "§1 /v1/events allow": ["/v1/events", native("git status"), "POST"],
    "§1 /v1/events, no hook fits": [
      "/v1/events",
      JSON.stringify({ event_type: "pre-agent-turn", session_id: "s1", prompt: "hi" }),
      "POST",
    ],
    "/healthz (floor)": ["/healthz", null, "GET"],
  };
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const once = async ([path, body, method]: [string, string | null, string]) => {
    const t0 = performance.now();
    const res = await fetch(`${server.url}${path}`, { method, headers, ...(body ? { body } : {}) });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${path}: ${res.status}`);
    return performance.now() - t0;
  };
  for (const spec of Object.values(paths)) for (let i = 0; i < 50; i++) await once(spec); // warm
  const times: Record<string, number[]> = {};
  for (let i = 0; i < EVENTS; i++) {
    for (const [name, spec] of Object.entries(paths)) (times[name] ??= []).push(await once(spec));
  }
  const pct = (xs: number[], p: number) =>
    [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
  const floor = pct(times["/healthz (floor)"]!, 0.5);
  console.log(
    `${EVENTS} interleaved rounds, sequential, loopback; built-in hooks as platform hooks`,
  );
  for (const [name, xs] of Object.entries(times)) {
    console.log(
      `${name.padEnd(32)} p50 ${pct(xs, 0.5).toFixed(3)} ms  p99 ${pct(xs, 0.99).toFixed(3)} ms  ` +
        `${(pct(xs, 0.5) / floor).toFixed(2)}× floor`,
    );
  }
  console.log("target: the HTTP adapter p50 ≤ 2 ms per event");
} finally {
  await server.stop();
  await Deno.remove(dir, { recursive: true });
}
