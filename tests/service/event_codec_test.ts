/**
 * Big event bodies read, and big answers written, on the Deno server's event
 * codec (a worker of its own) are answered exactly as when read and written
 * in place: decisions, reasons, coded `400`s, agents' answers and their
 * fail-closed blocks.
 */
import assert from "node:assert/strict";
import { createEventCodec } from "../../packages/deno/serve/event_codec.ts";
import type { EventCodec } from "../../packages/service/event_body.ts";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { type Harness, harness, wasmFolder } from "./_api.ts";
import { tempDir } from "../_helpers.ts";

const wide = (n: number, prefix = "k") =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));
const json = (value: unknown): Uint8Array<ArrayBuffer> =>
  new TextEncoder().encode(JSON.stringify(value));

/** Bodies at least 64 KiB, each as raw bytes, with the route they go to. */
function bodies(): { name: string; path: string; raw: Uint8Array<ArrayBuffer> }[] {
  const keys = wide(8000);
  const event = (command: string, extra: Record<string, unknown> = {}) => ({
    event_type: "pre-tool-call",
    session_id: "s",
    tool_name: "Bash",
    tool_input: { command, ...keys },
    ...extra,
  });
  const claude = (command: string) => ({
    session_id: "s",
    cwd: "/repo",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command, ...keys },
  });
  const notUtf8 = json(event("ls"));
  notUtf8[notUtf8.length - 20] = 0xff;
  const { tool_name: _, ...nameless } = event("ls");
  return [
    { name: "blocked", path: "/v1/events", raw: json(event("rm -rf /")) },
    { name: "allowed", path: "/v1/events", raw: json(event("ls")) },
    { name: "invalid", path: "/v1/events", raw: json(nameless) },
    { name: "not UTF-8", path: "/v1/events", raw: notUtf8 },
    { name: "not JSON", path: "/v1/events", raw: json(event("ls")).slice(0, -1) },
    { name: "too wide", path: "/v1/events", raw: json({ ...event("ls"), ...wide(1100, "x") }) },
    { name: "claude deny", path: "/v1/agents/claude-code/events", raw: json(claude("rm -rf /")) },
    { name: "claude allow", path: "/v1/agents/claude-code/events", raw: json(claude("ls")) },
    {
      name: "claude unreadable",
      path: "/v1/agents/claude-code/events?event=PreToolUse",
      raw: json({ ...claude("ls"), session_id: 7 }),
    },
    {
      name: "claude not JSON",
      path: "/v1/agents/claude-code/events?event=PreToolUse",
      raw: json(claude("ls")).slice(1),
    },
  ];
}

/** An answer without what differs from call to call. */
function comparable(body: unknown): unknown {
  return JSON.parse(
    JSON.stringify(body),
    (key, value) => key === "decision_id" || key === "duration_ms" ? undefined : value,
  );
}

async function service(
  dir: string,
  codec?: EventCodec,
  plugin = "guard_wasi",
  { workers = 1, manifest = "on_error: closed\n" } = {},
): Promise<{ h: Harness; key: string }> {
  const h = await harness(
    openSqliteStore(`${dir}/${codec ? "apart" : "in-place"}-${workers}.db`),
    undefined,
    workers,
    undefined,
    codec ? { eventCodec: codec } : {},
  );
  const key = await h.tenant("t");
  const up = await h.call("PUT", "/v1/hooks/guard", {
    key,
    body: await wasmFolder("guard", plugin, manifest),
  });
  assert.equal(up.status, 201, JSON.stringify(up.body));
  return { h, key };
}

/** The Deno codec, counting what it is given. */
function counted() {
  const codec = createEventCodec();
  const counts = { read: 0, write: 0 };
  const wrapped: EventCodec = {
    minBytes: codec.minBytes,
    read: (bytes, source) => (counts.read++, codec.read(bytes, source)),
    write: (tenantId, value) => (counts.write++, codec.write(tenantId, value)),
  };
  return { codec, counts, wrapped };
}

Deno.test("big event bodies read on the codec's worker are answered as when read in place", async () => {
  const dir = await tempDir("hookbox-test-");
  const { codec, counts, wrapped } = counted();
  const inPlace = await service(dir);
  const apart = await service(dir, wrapped);
  try {
    const cases = bodies();
    for (const { name, path, raw } of cases) {
      assert.ok(raw.byteLength >= codec.minBytes, `${name} is a big body`);
      const here = await inPlace.h.call("POST", path, { key: inPlace.key, raw: raw.slice() });
      const there = await apart.h.call("POST", path, { key: apart.key, raw: raw.slice() });
      assert.equal(there.status, here.status, `${name}: ${JSON.stringify(there.body)}`);
      assert.deepEqual(comparable(there.body), comparable(here.body), name);
    }
    assert.equal(counts.read, cases.length, "every big body went to the codec");
    // What the answers are, so that "the same" is not "the same failure".
    const answer = async (name: string) => {
      const { path, raw } = bodies().find((b) => b.name === name)!;
      return await apart.h.call("POST", path, { key: apart.key, raw: raw.slice() });
    };
    const blocked = await answer("blocked");
    assert.deepEqual([blocked.status, blocked.body.decision, blocked.body.reason], [
      200,
      "block",
      "rm -rf is not allowed",
    ]);
    assert.equal((await answer("allowed")).body.decision, "allow");
    const invalid = await answer("invalid");
    assert.deepEqual([invalid.status, invalid.body.error.code], [400, "EVENT_INVALID"]);
    assert.equal((await answer("not UTF-8")).body.error.code, "JSON_INVALID");
    assert.equal((await answer("not JSON")).body.error.code, "JSON_INVALID");
    const tooWide = await answer("too wide");
    assert.match(tooWide.body.error.message, /more than 1024 top-level fields/);
    const deny = await answer("claude deny");
    assert.equal(deny.body.hookSpecificOutput.permissionDecision, "deny");
    assert.deepEqual((await answer("claude allow")).body, {});
    // A payload the service cannot evaluate is the agent's block where a closed guard applies.
    const unreadable = await answer("claude unreadable");
    assert.equal(unreadable.status, 200);
    assert.equal(unreadable.body.hookSpecificOutput.permissionDecision, "deny");
    assert.match(unreadable.body.hookSpecificOutput.permissionDecisionReason, /cannot evaluate/);
    assert.equal(
      (await answer("claude not JSON")).body.hookSpecificOutput.permissionDecision,
      "deny",
    );
  } finally {
    codec.close();
    await inPlace.h.close();
    await apart.h.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a codec that is closed answers a body 503 SHUTTING_DOWN with Retry-After", async () => {
  const dir = await tempDir("hookbox-test-");
  const codec = createEventCodec({ minBytes: 1 });
  codec.close();
  const { h, key } = await service(dir, codec);
  try {
    const answer = await h.call("POST", "/v1/events", {
      key,
      body: { event_type: "pre-tool-call", session_id: "s", tool_name: "Bash", tool_input: {} },
    });
    assert.deepEqual([answer.status, answer.body.error.code], [503, "SHUTTING_DOWN"]);
    assert.equal(answer.headers.get("retry-after"), "1");
  } finally {
    await h.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a codec whose worker cannot start answers 503 OUT_OF_FILES, then starts it for the next body", async () => {
  const dir = await tempDir("hookbox-test-");
  let refuse = true;
  const codec = createEventCodec({
    minBytes: 1,
    log: () => {},
    // What host-deno's startWorker does when the process is out of file descriptors.
    startWorker: (url, options) => {
      if (refuse) throw new Error("Too many open files (os error 24): no file descriptors left");
      return new Worker(url, options);
    },
  });
  const { h, key } = await service(dir, codec);
  const body = { event_type: "pre-tool-call", session_id: "s", tool_name: "Bash", tool_input: {} };
  try {
    const refused = await h.call("POST", "/v1/events", { key, body });
    assert.deepEqual([refused.status, refused.body.error.code], [503, "OUT_OF_FILES"]);
    assert.equal(refused.headers.get("retry-after"), "1");
    refuse = false;
    const answered = await h.call("POST", "/v1/events", { key, body });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
  } finally {
    await h.close();
    codec.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("big answers written on the codec's worker are the answers written in place", async () => {
  const dir = await tempDir("hookbox-test-");
  const { codec, counts, wrapped } = counted();
  // A hook that blocks every event with a reason of a million characters, and one that
  // rewrites every tool call to a command of a million characters.
  const services = async (plugin: string) => {
    await Deno.mkdir(`${dir}/${plugin}`);
    return [
      await service(`${dir}/${plugin}`, undefined, plugin),
      await service(`${dir}/${plugin}`, wrapped, plugin),
    ] as const;
  };
  const reasons = await services("huge_reason");
  const rewrites = await services("huge_rewrite");
  const small = {
    session_id: "s",
    cwd: "/repo",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls" },
  };
  const million = "x".repeat(1_000_000);
  try {
    const routes: [string, unknown, typeof reasons, "whole" | "cut"][] = [
      [
        "/v1/events",
        {
          event_type: "pre-tool-call",
          session_id: "s",
          tool_name: "Bash",
          tool_input: {},
        },
        reasons,
        "whole",
      ],
      // An agent is given a block's reason cut for its model (docs/ADAPTERS.md)...
      ["/v1/agents/claude-code/events", small, reasons, "cut"],
      [
        "/v1/agents/windsurf/events",
        {
          agent_action_name: "pre_run_command",
          trajectory_id: "t1",
          tool_info: { command_line: "ls", cwd: "/repo" },
        },
        reasons,
        "cut",
      ],
      // ...and a rewrite whole: what the tool runs.
      ["/v1/agents/claude-code/events", small, rewrites, "whole"],
      ["/v1/agents/claude-code/events?form=command", small, rewrites, "whole"],
    ];
    for (const [path, body, [inPlace, apart], size] of routes) {
      const here = await inPlace.h.call("POST", path, { key: inPlace.key, body });
      const there = await apart.h.call("POST", path, { key: apart.key, body });
      assert.equal(there.status, 200, path);
      assert.equal(there.headers.get("content-type"), "application/json");
      assert.deepEqual(comparable(there.body), comparable(here.body), path);
      const text = JSON.stringify(there.body);
      if (size === "whole") assert.ok(text.includes(million), path);
      else assert.ok(!text.includes(million) && /more characters cut/.test(text), path);
    }
    // The §1 answer and the command form; Claude's JSON passes as it is, cut answers are small.
    assert.equal(counts.write, 2);
    assert.equal(counts.read, 0);
  } finally {
    codec.close();
    for (const { h } of [...reasons, ...rewrites]) await h.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a hook's big output from a plugin worker is answered as when it runs in place", async () => {
  const dir = await tempDir("hookbox-test-");
  // The same hook in place and on a plugin worker, whose 192 KiB of output crosses as bytes.
  const services = await Promise.all(
    [0, 1].map((workers) =>
      service(dir, undefined, "big_output", { workers, manifest: "limits:\n  output_kb: 1024\n" })
    ),
  );
  try {
    const event = {
      event_type: "pre-tool-call",
      session_id: "s",
      tool_name: "Bash",
      tool_input: {},
    };
    const [here, there] = await Promise.all(
      services.map(({ h, key }) => h.call("POST", "/v1/events", { key, body: event })),
    );
    assert.equal(there!.status, 200);
    assert.equal(there!.headers.get("content-type"), "application/json");
    assert.deepEqual(comparable(there!.body), comparable(here!.body));
    const stdout = (there!.body as { hooks: { stdout: string }[] }).hooks[0]!.stdout;
    assert.equal(stdout, 'a"b\\c\nd\u00e9efghijk'.repeat(196_608 / 16));
  } finally {
    await Promise.all(services.map(({ h }) => h.close()));
    await Deno.remove(dir, { recursive: true });
  }
});
