/**
 * The cache folder stays within its cap: the least recently used entries go,
 * entries just used stay, temporary files of killed writes go after an hour,
 * and nothing hookbox did not write is ever removed. Through the CLI: a
 * dispatch that builds a JS hook trims a cache over `HOOKBOX_CACHE_MAX_MB`.
 */
import assert from "node:assert/strict";
import { sweepStaleTemp, trimCache } from "../../packages/host-deno/cache_trim.ts";
import { runCli } from "../_cli.ts";
import { hookMd, tempDir } from "../_helpers.ts";

const KIB = 1024;
const HOUR = 3_600_000;

/** A file of `kib` KiB at `path`, last used `ago` ms before now. */
async function aged(path: string, kib: number, ago: number): Promise<void> {
  await Deno.writeFile(path, new Uint8Array(kib * KIB).fill(1));
  const when = new Date(Date.now() - ago);
  await Deno.utime(path, when, when);
}

const hex = (n: number) => n.toString(16).padStart(64, "0");
const names = (dir: string) => [...Deno.readDirSync(dir)].map((e) => e.name).sort();

Deno.test("trimCache() removes the least recently used entries past the cap, and only hookbox's", async () => {
  const dir = await tempDir("hookbox-trim-");
  try {
    await Deno.mkdir(`${dir}/prepared`);
    // Ten compiled plugins of 100 KiB used 1 to 10 days ago, one just now.
    for (let i = 1; i <= 10; i++) await aged(`${dir}/js-${hex(i)}.wasm`, 100, i * 24 * HOUR);
    await aged(`${dir}/js-${hex(99)}.wasm`, 100, 0);
    // A prepared entry used long ago, its alias; temporary files of a killed write and a live one.
    await aged(`${dir}/prepared/${hex(20)}.wasm`, 100, 30 * 24 * HOUR);
    await aged(`${dir}/prepared/${hex(20)}.json`, 1, 30 * 24 * HOUR);
    await aged(`${dir}/prepared/id-${hex(21)}`, 1, 30 * 24 * HOUR);
    await Deno.mkdir(`${dir}/scans`);
    await aged(`${dir}/scans/${hex(22)}.json`, 1, 30 * 24 * HOUR);
    const uuid = "0123abcd-0123-4567-89ab-0123456789ab";
    await aged(`${dir}/js-${hex(30)}.wasm.${uuid}.tmp`, 100, 2 * HOUR);
    await aged(`${dir}/js-${hex(31)}.wasm.${uuid}.tmp`, 100, 60_000);
    // Not hookbox's: never removed, whatever its age or size.
    await aged(`${dir}/notes.txt`, 500, 90 * 24 * HOUR);
    await aged(`${dir}/js-not-a-key.wasm`, 100, 90 * 24 * HOUR);

    const trimmed = await trimCache(dir, 600 * KIB);
    assert.equal(trimmed.files, 15);
    assert.ok(trimmed.bytes >= 1200 * KIB, `found ${trimmed.bytes} bytes`);
    // Down to three quarters of the cap (450 KiB): the oldest go first, the prepared entry first.
    assert.deepEqual(names(`${dir}/prepared`), []);
    assert.deepEqual(names(`${dir}/scans`), []);
    assert.deepEqual(names(dir), [
      `js-${hex(1)}.wasm`,
      `js-${hex(2)}.wasm`,
      `js-${hex(3)}.wasm`,
      `js-${hex(31)}.wasm.${uuid}.tmp`,
      `js-${hex(99)}.wasm`,
      "js-not-a-key.wasm",
      "notes.txt",
      "prepared",
      "scans",
    ]);

    // Under the cap: nothing goes.
    const again = await trimCache(dir, 600 * KIB);
    assert.equal(again.removed, 0);
    // A cap smaller than what was used in the last ten minutes: those entries stay.
    await trimCache(dir, 1);
    assert.deepEqual(
      (names(dir)).filter((n) => n.startsWith("js-")),
      [`js-${hex(31)}.wasm.${uuid}.tmp`, `js-${hex(99)}.wasm`, "js-not-a-key.wasm"],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sweepStaleTemp() removes hookbox's own temporary files over an hour old, nothing else", async () => {
  const tmp = await tempDir("hookbox-tmp-test-");
  try {
    await aged(`${tmp}/hookbox-build-abc.wasm`, 4, 2 * HOUR);
    await Deno.mkdir(`${tmp}/hookbox-upload-old/guard`, { recursive: true });
    await aged(`${tmp}/hookbox-upload-old/guard/HOOK.md`, 1, 2 * HOUR);
    const old = new Date(Date.now() - 2 * HOUR);
    await Deno.utime(`${tmp}/hookbox-upload-old`, old, old);
    await Deno.mkdir(`${tmp}/hookbox-upload-new`);
    await aged(`${tmp}/other-old`, 1, 2 * HOUR);
    await Deno.symlink("/etc", `${tmp}/hookbox-upload-link`);
    assert.equal(await sweepStaleTemp(tmp), 2);
    assert.deepEqual(names(tmp), ["hookbox-upload-link", "hookbox-upload-new", "other-old"]);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("a dispatch that builds a JS hook keeps the cache within HOOKBOX_CACHE_MAX_MB", async () => {
  const root = await tempDir("hookbox-trim-cli-");
  const cache = `${root}/cache`;
  try {
    await Deno.mkdir(`${cache}/prepared`, { recursive: true });
    // What earlier edits left: 12 MiB of compiled and prepared plugins nobody used for a week.
    for (let i = 1; i <= 10; i++) {
      await aged(`${cache}/js-${hex(i)}.wasm`, 600, 7 * 24 * HOUR);
      await aged(`${cache}/prepared/${hex(i)}.wasm`, 600, 7 * 24 * HOUR);
    }
    const hook = `${root}/hooks/guard`;
    await Deno.mkdir(`${hook}/scripts`, { recursive: true });
    await Deno.writeTextFile(
      `${hook}/HOOK.md`,
      hookMd({ name: "guard", trigger: "pre-tool-call" }),
    );
    await Deno.writeTextFile(
      `${hook}/scripts/run.mjs`,
      'export default function (e) {\n  if (e.tool_input?.command === "rm -rf /") ' +
        'return { decision: "block", reason: "no" };\n}\n',
    );
    const out = await runCli(
      ["dispatch", "--agent", "claude-code", "--hooks-dir", `${root}/hooks`],
      {
        cwd: root,
        env: { HOOKBOX_CACHE_DIR: cache, HOOKBOX_CACHE_MAX_MB: "8", XDG_CONFIG_HOME: `${root}/c` },
        stdin: JSON.stringify({
          session_id: "s",
          cwd: root,
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command: "rm -rf /" },
        }),
      },
    );
    assert.match(out.stdout, /"permissionDecision":"deny"/, out.stderr);
    const files = [
      ...(names(cache)).map((n) => `${cache}/${n}`),
      ...(names(`${cache}/prepared`)).map((n) => `${cache}/prepared/${n}`),
    ];
    const old = files.filter((p) => /\/(js-)?0{60}/.test(p));
    assert.ok(old.length < 20, `the week-old entries were trimmed: ${old.length} left`);
    // The hook's own new entries stay.
    assert.ok(files.some((p) => /\/js-[0-9a-f]{64}\.wasm$/.test(p) && !/\/js-0{60}/.test(p)));
    let bytes = 0;
    for (const path of files) {
      const info = await Deno.stat(path);
      if (info.isFile) bytes += info.size;
    }
    assert.ok(bytes <= 8 * 1024 * KIB, `within the cap: ${bytes} bytes`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
