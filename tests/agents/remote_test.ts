/**
 * `hookbox dispatch --agent NAME --remote URL` (or `$HOOKBOX_REMOTE`): the
 * agent's hook command answered by a running service over HTTP, printing and
 * exiting exactly as the in-process command does on the same hooks.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { ROOT, runWithStdin, tempDir } from "../_helpers.ts";
import { type Harness, harness, wasmFolder } from "../service/_api.ts";
import { claudeBash } from "./_agent_hooks.ts";
import { REMOTE_TIMEOUT_MS } from "../../packages/cli/remote.ts";
import { AGENT_EVENT_MS } from "../../packages/service/routes/events.ts";

const CLI = [Deno.execPath(), "run", "-A", `${ROOT}/packages/cli/main.ts`];

/** Runs `fn` against a service on a fresh store, listening on 127.0.0.1; cleans up after. */
async function withService(
  prefix: string,
  fn: (h: Harness, dir: string, url: string) => Promise<void>,
): Promise<void> {
  const dir = await tempDir(prefix);
  const h = await harness(openSqliteStore(`${dir}/hookbox.db`));
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (req) => h.service.app.fetch(req),
  );
  try {
    await fn(h, dir, `http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
    await h.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** The CLI's arguments for Claude Code's `PreToolUse` asked of the service at `url`, and `more`. */
const remotePreToolUse = (url: string, ...more: string[]) => [
  ...CLI.slice(1),
  "dispatch",
  "--agent",
  "claude-code",
  "--event",
  "PreToolUse",
  "--remote",
  url,
  ...more,
];

Deno.test("dispatch --remote answers each agent like the in-process command", async () => {
  await withService("hookbox_remote_", async (h, dir, url) => {
    const key = await h.tenant("acme");
    // The same guard for the service (uploaded) and the local command (a hook folder).
    const up = await h.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "guard_wasi"),
    });
    assertEquals(up.status, 201, JSON.stringify(up.body));
    await Deno.mkdir(`${dir}/hooks/guard`, { recursive: true });
    const files = (await wasmFolder("guard", "guard_wasi")) as { files: Record<string, unknown> };
    await Deno.writeTextFile(`${dir}/hooks/guard/HOOK.md`, files.files["HOOK.md"] as string);
    const b64 = (files.files["plugin.wasm"] as { base64: string }).base64;
    await Deno.writeFile(
      `${dir}/hooks/guard/plugin.wasm`,
      Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)),
    );
    const claude = (command: string) => claudeBash(command, dir);
    const windsurf = (command: string) =>
      JSON.stringify({
        agent_action_name: "pre_run_command",
        trajectory_id: "tr1",
        execution_id: "ex1",
        tool_info: { command_line: command, cwd: dir },
      });
    const env = { HOOKBOX_KEY: key, XDG_CONFIG_HOME: `${dir}/config`, NO_COLOR: "1" };
    for (const [agent, payload] of [["claude-code", claude], ["windsurf", windsurf]] as const) {
      for (const command of ["rm -rf /", "ls"]) {
        const local = await runWithStdin(
          CLI[0]!,
          [...CLI.slice(1), "dispatch", "--agent", agent, "--hooks-dir", `${dir}/hooks`],
          payload(command),
          { env, cwd: dir },
        );
        const remote = await runWithStdin(
          CLI[0]!,
          [...CLI.slice(1), "dispatch", "--agent", agent, "--remote", url],
          payload(command),
          { env, cwd: dir },
        );
        assertEquals(remote, local, `${agent} ${command}`);
        // Not a trivial match: the guard blocks in both agents' own protocols.
        const blocked = command === "rm -rf /";
        if (agent === "windsurf") assertEquals(local.exitCode, blocked ? 2 : 0);
        else assertEquals(local.stdout.includes('"permissionDecision":"deny"'), blocked);
        const byEnv = await runWithStdin(
          CLI[0]!,
          [...CLI.slice(1), "dispatch", "--agent", agent],
          payload(command),
          { env: { ...env, HOOKBOX_REMOTE: url }, cwd: dir },
        );
        assertEquals(byEnv, local, `${agent} ${command} via $HOOKBOX_REMOTE`);
      }
    }
    // No key, a wrong key, or no server: exit 1 with one line naming the problem (the agent goes on).
    const args = [...CLI.slice(1), "dispatch", "--agent", "claude-code", "--remote", url];
    const noKey = await runWithStdin(CLI[0]!, args, claude("ls"), {
      env: { HOOKBOX_KEY: "" },
      cwd: dir,
    });
    assertEquals(noKey.exitCode, 1);
    match(noKey.stderr, /HOOKBOX_KEY/);
    const wrong = await runWithStdin(CLI[0]!, args, claude("ls"), {
      env: { ...env, HOOKBOX_KEY: "nope" },
      cwd: dir,
    });
    assertEquals(wrong.exitCode, 1);
    match(wrong.stderr, /remote answered 401/);
  });
});

Deno.test("dispatch --remote refuses a hostile server's answer: wrong shape, oversized, slow or trickled", async () => {
  const answers: Record<string, () => Response | Promise<Response>> = {
    "/shape/": () => Response.json({ exit_code: "2", stdout: 1 }),
    "/code/": () => Response.json({ exit_code: 999, stdout: "", stderr: "" }),
    "/huge/": () => new Response("x".repeat(5 * 1024 * 1024)),
    "/slow/": () => new Promise((resolve) => setTimeout(() => resolve(Response.json({})), 2_000)),
    // Headers at once, then a byte of the body every 100 ms without end.
    "/trickle/": () => {
      let timer: ReturnType<typeof setInterval> | undefined;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"exit_code":0,'));
          timer = setInterval(() => controller.enqueue(new TextEncoder().encode(" ")), 100);
        },
        cancel() {
          clearInterval(timer);
        },
      });
      return new Response(body, { headers: { "content-type": "application/json" } });
    },
  };
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const prefix = Object.keys(answers).find((p) => new URL(req.url).pathname.startsWith(p));
    return prefix ? answers[prefix]!() : new Response("no", { status: 404 });
  });
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const cases: [string, string[], RegExp][] = [
      ["/shape/", [], /not \{exit_code, stdout, stderr\}/],
      ["/code/", [], /not \{exit_code, stdout, stderr\}/],
      ["/huge/", [], /over 4194304 bytes/],
      ["/slow/", ["--timeout-ms", "200"], /remote http:\/\/127\.0\.0\.1/],
      ["/trickle/", ["--timeout-ms", "500"], /remote http:\/\/127\.0\.0\.1.*answer was not read/],
    ];
    for (const [path, extra, message] of cases) {
      const out = await runWithStdin(
        CLI[0]!,
        [...CLI.slice(1), "dispatch", "--agent", "claude-code", "--remote", base + path, ...extra],
        claudeBash("ls", "/tmp"),
        { env: { HOOKBOX_KEY: "k", NO_COLOR: "1" } },
      );
      assertEquals([out.exitCode, out.stdout], [1, ""], path);
      match(out.stderr, message, path);
      // --strict: every such answer is the agent's block, never its non-blocking error.
      const strict = await runWithStdin(
        CLI[0]!,
        remotePreToolUse(base + path, "--strict", ...extra),
        claudeBash("ls", "/tmp"),
        { env: { HOOKBOX_KEY: "k", NO_COLOR: "1" } },
      );
      assertEquals(strict.exitCode, 0, `${path}: ${strict.stderr}`);
      const answer = JSON.parse(strict.stdout).hookSpecificOutput;
      assertEquals(answer.permissionDecision, "deny", path);
    }
  } finally {
    await server.shutdown();
  }
});

Deno.test("dispatch --remote --strict: a service that cannot be asked is the agent's block", async () => {
  const args = ["dispatch", "--agent", "claude-code", "--event", "PreToolUse"];
  const env = { HOOKBOX_KEY: "k", NO_COLOR: "1" };
  // Port 9 on 127.0.0.1: nothing listens there.
  const open = await runWithStdin(
    CLI[0]!,
    [...CLI.slice(1), ...args, "--remote", "http://127.0.0.1:9"],
    claudeBash("ls", "/tmp"),
    { env },
  );
  assertEquals([open.exitCode, open.stdout], [1, ""]);
  for (const strict of [["--strict"], []]) {
    const out = await runWithStdin(
      CLI[0]!,
      [...CLI.slice(1), ...args, "--remote", "http://127.0.0.1:9", ...strict],
      claudeBash("ls", "/tmp"),
      { env: strict.length > 0 ? env : { ...env, HOOKBOX_STRICT: "1" } },
    );
    assertEquals(out.exitCode, 0, out.stderr);
    const answer = JSON.parse(out.stdout).hookSpecificOutput;
    assertEquals(answer.permissionDecision, "deny");
    match(answer.permissionDecisionReason, /could not ask its service .* runs --strict/);
  }
});

Deno.test("dispatch --remote sends the head of a payload over the stdin cap; a closed guard blocks it", async () => {
  await withService("hookbox_remote_big_", async (h, dir, url) => {
    const key = await h.tenant("acme");
    const up = await h.call("PUT", "/v1/hooks/guard", {
      key,
      body: await wasmFolder("guard", "guard_wasi", "on_error: closed\n"),
    });
    assertEquals(up.status, 201, JSON.stringify(up.body));
    const child = new Deno.Command(CLI[0]!, {
      args: remotePreToolUse(url),
      env: { HOOKBOX_KEY: key, NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(claudeBash("rm -rf /", dir).slice(0, -1)))
      .catch(() => {});
    const pad = new Uint8Array(1 << 20).fill(0x20);
    for (let i = 0; i < 17; i++) await writer.write(pad).catch(() => {});
    await writer.close().catch(() => {});
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
    const answer = JSON.parse(stdout).hookSpecificOutput;
    assertEquals(answer.permissionDecision, "deny");
    match(answer.permissionDecisionReason, /hook "guard" guards it and fails closed/);
  });
});

Deno.test("dispatch --remote waits longer than the service gives an agent's hooks", () => {
  // Past the deadline the service answers with a closed guard's block; a client that gave up
  // first would fail the call, which the agent lets through.
  ok(
    REMOTE_TIMEOUT_MS >= AGENT_EVENT_MS + 5_000,
    `${REMOTE_TIMEOUT_MS} ms against the service's ${AGENT_EVENT_MS} ms`,
  );
  ok(REMOTE_TIMEOUT_MS < 30_000, "under Copilot's 30 s hook timeout");
});
