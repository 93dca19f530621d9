/**
 * The stop gate's facts that agents' payloads lack (packages/cli/_stop.ts):
 * `stop_count` across hook processes (counted per session, reset by a stop
 * that is not a retry, kept only for sessions whose stop was bounced, so a
 * stop costs no scan of the folder), and the last answer read from a
 * transcript the agent writes after it started the hook (Copilot).
 */
import assert from "node:assert/strict";
import { lastAnswer, readTail, stopCount } from "../../packages/cli/_stop.ts";
import { runCli } from "../_cli.ts";
import { tempDir } from "../_helpers.ts";

async function files(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return names;
}

Deno.test("stop_count: retries count up, a new stop starts again at 0", async () => {
  const cache = await tempDir("hookbox-test-");
  try {
    const counts = [];
    for (const retry of [false, true, true, false, true]) {
      counts.push(await stopCount("claude-code", "s1", retry, cache));
    }
    assert.deepEqual(counts, [0, 1, 2, 0, 1]);
    // Another agent's session of the same id counts on its own.
    assert.deepEqual(await stopCount("codex", "s1", true, cache), 1);
    assert.deepEqual(await stopCount("claude-code", "s1", true, cache), 2);
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("stop_count: stops that are never bounced leave nothing behind", async () => {
  const cache = await tempDir("hookbox-test-");
  try {
    for (let i = 0; i < 50; i++) {
      assert.deepEqual(await stopCount("gemini-cli", `session-${i}`, false, cache), 0);
    }
    assert.deepEqual(await files(`${cache}/stops`), []);
    assert.deepEqual(await stopCount("gemini-cli", "session-7", true, cache), 1);
    assert.deepEqual((await files(`${cache}/stops`)).length, 1);
    // The session's next turn stops without a retry: its counter goes.
    assert.deepEqual(await stopCount("gemini-cli", "session-7", false, cache), 0);
    assert.deepEqual(await files(`${cache}/stops`), []);
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

Deno.test("stop_count: a newly bounced session past 1,000 kept removes the oldest", async () => {
  const cache = await tempDir("hookbox-test-");
  const dir = `${cache}/stops`;
  try {
    await Deno.mkdir(dir);
    const old = new Date("2026-01-01T00:00:00Z");
    for (let i = 0; i < 1000; i++) {
      const name = `${dir}/${i.toString(16).padStart(64, "0")}`;
      await Deno.writeTextFile(name, "1");
      const at = new Date(old.getTime() + i * 1000);
      await Deno.utime(name, at, at);
    }
    assert.deepEqual(await stopCount("copilot", "new", true, cache), 1);
    const left = await files(dir);
    assert.deepEqual(left.length, 1000);
    assert(!left.includes("0".repeat(64)), "the oldest counter is removed");
    assert(left.includes(`${(1).toString(16).padStart(64, "0")}`), "newer counters are kept");
  } finally {
    await Deno.remove(cache, { recursive: true });
  }
});

/** A Copilot events-file line. */
function line(record: Record<string, unknown>): string {
  return JSON.stringify(record) + "\n";
}

Deno.test("lastAnswer: waits for the hook's own start event before reading the answer", async () => {
  const dir = await tempDir("hookbox-test-");
  const path = `${dir}/events.jsonl`;
  try {
    // The previous turn's answer is there already; this turn's comes with the hook's start.
    await Deno.writeTextFile(
      path,
      line({ type: "assistant.message", data: { content: "the previous answer" } }),
    );
    const marker = `"timestamp":1795760203108`;
    const writer = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await Deno.writeTextFile(path, line({ type: "user.message", data: { content: "go on" } }), {
        append: true,
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await Deno.writeTextFile(
        path,
        line({ type: "assistant.message", data: { content: "this turn's answer" } }) +
          line({ type: "hook.start", data: { hookType: "agentStop" }, timestamp: 1795760203108 }),
        { append: true },
      );
    })();
    assert.equal(await lastAnswer(path, marker), "this turn's answer");
    await writer;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("lastAnswer: a transcript that never shows the marker is read after the wait", async () => {
  const dir = await tempDir("hookbox-test-");
  const path = `${dir}/events.jsonl`;
  try {
    await Deno.writeTextFile(
      path,
      line({ type: "assistant.message", data: { content: "all there is" } }),
    );
    assert.equal(await lastAnswer(path, `"timestamp":1`), "all there is");
    assert.equal(await lastAnswer(`${dir}/missing.jsonl`, `"timestamp":1`), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a transcript read opens only a regular file: a FIFO or a link in its place is null at once", async () => {
  const dir = await tempDir("hookbox-test-");
  try {
    const path = `${dir}/events.jsonl`;
    await Deno.writeTextFile(path, "0123456789");
    assert.deepEqual(await readTail(path, 4), {
      bytes: new TextEncoder().encode("6789"),
      whole: false,
    });
    assert.equal((await readTail(path, 64))?.whole, true);
    // What a payload could name, or a swap put at the path: a FIFO with no writer
    // (opened for reading the ordinary way, it waits for one for ever), a link to another file.
    const fifo = `${dir}/fifo.jsonl`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(made.success, new TextDecoder().decode(made.stderr));
    await Deno.symlink(path, `${dir}/link.jsonl`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<string>((resolve) =>
      timer = setTimeout(() => resolve("hung"), 10_000)
    );
    try {
      for (const name of ["fifo.jsonl", "link.jsonl"]) {
        assert.equal(await Promise.race([readTail(`${dir}/${name}`, 64), hung]), null, name);
      }
      assert.equal(await Promise.race([readTail("/dev/zero", 64), hung]), null);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("stop_count: a counter that cannot be kept is a line for the agent, and counts on", async () => {
  const dir = await tempDir("hookbox-test-");
  try {
    // A cache "folder" that is a file: no counter can be written or removed under it.
    const cache = `${dir}/not-a-folder`;
    await Deno.writeTextFile(cache, "");
    const problems: string[] = [];
    assert.equal(await stopCount("claude-code", "s1", false, cache, problems), 0);
    assert.equal(await stopCount("claude-code", "s1", true, cache, problems), 1);
    assert.equal(problems.length, 2);
    assert.match(
      problems[0]!,
      /^hookbox: could not keep the stop count in .*not-a-folder\/stops: /,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a stop count that cannot be kept reaches the agent as a notice", async () => {
  const dir = await tempDir("hookbox-test-");
  try {
    const cache = `${dir}/not-a-folder`;
    await Deno.writeTextFile(cache, "");
    await Deno.mkdir(`${dir}/hooks`);
    const out = await runCli(
      ["dispatch", "--agent", "claude-code", "--event", "Stop", "--hooks-dir", `${dir}/hooks`],
      {
        cwd: dir,
        env: { HOOKBOX_CACHE_DIR: cache, HOME: dir },
        stdin: JSON.stringify({
          session_id: "s1",
          cwd: dir,
          hook_event_name: "Stop",
          stop_hook_active: false,
          last_assistant_message: "Done.",
        }),
      },
    );
    assert.equal(out.code, 0);
    assert.match(out.stderr, /could not keep the stop count/);
    assert.match(JSON.parse(out.stdout).systemMessage, /could not keep the stop count/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
