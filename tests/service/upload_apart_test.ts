/**
 * A big JSON upload (up to 16 MiB of text and base64) is read on a worker of
 * its own by the Deno builder, with the answers of one read in place: the
 * same files, the same refusals naming the same field.
 */
import assert from "node:assert/strict";
import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import {
  loadHookApart,
  parseUploadApart,
  unpackApart,
  unpackWorkersStarted,
} from "../../packages/deno/serve/unpack.ts";
import { loadHook } from "../../packages/core/hook/discover.ts";
import { denoFs } from "../../packages/host-deno/fs.ts";
import { hookProblems } from "../../packages/deno/serve/hook_problems.ts";
import { HookRejected } from "../../packages/service/builder.ts";
import { unpackArchive } from "../../packages/service/archive.ts";
import { createTar } from "nanotar";
import { createDenoHookBuilder } from "../../packages/deno/serve/hook_builder.ts";
import { APART_UPLOAD_BYTES, uploadFiles } from "../../packages/service/request.ts";
import { ApiError } from "../../packages/service/errors.ts";
import { encodeBase64 } from "../_base64.ts";
import { pluginBytes } from "../integration/_plugins.ts";
import { harness, hookMd } from "./_api.ts";
import { tempDir } from "../_helpers.ts";

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** What reading `body` gives: its files, or the error's status, code and field. */
async function outcome(read: () => Map<string, Uint8Array> | Promise<Map<string, Uint8Array>>) {
  try {
    return { files: [...await read()].map(([path, bytes]) => [path, [...bytes].join(",")]) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { error: [err.status, err.code, err.extra.field] };
  }
}

Deno.test("a JSON upload read on the worker gives what it gives read in place", async () => {
  const notes = "n".repeat(APART_UPLOAD_BYTES);
  const bodies = [
    json({ files: { "HOOK.md": hookMd("a"), "notes.txt": notes, "x.bin": { base64: "AAEC" } } }),
    json({ files: { "HOOK.md": hookMd("a"), "notes.txt": notes, "x.bin": { base64: "@@@" } } }),
    json({ files: { "notes.txt": 7 } }),
    new TextEncoder().encode(`{"files": {"notes.txt": "${notes}"`),
    new Uint8Array([0x7b, 0xff, 0x7d]),
  ];
  for (const body of bodies) {
    const here = await outcome(() => uploadFiles(body));
    const there = await outcome(() => parseUploadApart(body.slice()));
    assert.deepEqual(there, here);
  }
  assert.deepEqual((await outcome(() => uploadFiles(bodies[1]!))).error, [
    400,
    "REQUEST_INVALID",
    "files.x.bin",
  ]);
});

Deno.test("the service reads a big JSON upload through its builder's parseUpload", async () => {
  const dir = await tempDir("hookbox-test-");
  const builder = createDenoHookBuilder();
  let parsed = 0;
  // The Deno builder, with its parseUpload counted.
  const original = builder.parseUpload!;
  builder.parseUpload = (bytes) => (parsed++, original(bytes));
  const counted = await harness(openSqliteStore(`${dir}/counted.db`), undefined, 0, undefined, {
    builder,
  });
  try {
    const key = await counted.tenant("acme");
    const files = {
      "HOOK.md": hookMd("guard"),
      "plugin.wasm": { base64: encodeBase64(await pluginBytes("guard_wasi")) },
      "docs/notes.txt": "n".repeat(APART_UPLOAD_BYTES),
    };
    const up = await counted.call("PUT", "/v1/hooks/guard", { key, body: { files } });
    assert.equal(up.status, 201, JSON.stringify(up.body));
    assert.equal(parsed, 1, "the big body went to parseUpload");
    // A small one is read in place.
    const small = await counted.call("PUT", "/v1/hooks/small", {
      key,
      body: { files: { ...files, "HOOK.md": hookMd("small"), "docs/notes.txt": "n" } },
    });
    assert.equal(small.status, 201, JSON.stringify(small.body));
    assert.equal(parsed, 1);
  } finally {
    await counted.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** A hook folder of `count` files (HOOK.md and one-line scripts). */
function folder(count: number): { name: string; data: string }[] {
  return [
    { name: "HOOK.md", data: hookMd("many") },
    ...Array.from({ length: count - 1 }, (_, i) => ({ name: `scripts/f${i}.txt`, data: `${i}` })),
  ];
}

async function gzipTar(files: { name: string; data: string }[]): Promise<Uint8Array> {
  const tar = createTar(files) as Uint8Array<ArrayBuffer>;
  return await new Response(new Blob([tar]).stream().pipeThrough(new CompressionStream("gzip")))
    .bytes();
}

Deno.test("more files than a hook folder holds are refused where the upload is read", async () => {
  // Refused on the reading worker: tens of thousands of files never reach the request thread.
  const refusal = (files: { name: string; data: string }[]) =>
    json({ files: Object.fromEntries(files.map((f) => [f.name, f.data])) });
  const many = folder(20_000);
  const reads: [string, () => Promise<Map<string, Uint8Array>> | Map<string, Uint8Array>][] = [
    ["tar in place", async () => unpackArchive(await gzipTar(folder(65)))],
    ["tar on the worker", async () => unpackApart(await gzipTar(many))],
    ["JSON in place", () => uploadFiles(refusal(folder(65)))],
    ["JSON on the worker", () => parseUploadApart(refusal(many))],
  ];
  for (const [how, read] of reads) {
    const err = await Promise.resolve().then(read).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof ApiError, `${how}: refused`);
    assert.equal(err.status, 422, how);
    assert.equal(err.code, "HOOK_REJECTED", how);
    const problems = err.extra.problems as { code: string; message: string }[];
    assert.equal(problems[0]!.code, "HOOK_TOO_MANY", how);
    assert.match(problems[0]!.message, /at most 64 files, got (65|20000)$/, how);
  }
  // 64 files are read, and left to the builder.
  assert.equal((await unpackApart(await gzipTar(folder(64)))).size, 64);
  assert.equal(uploadFiles(refusal(folder(64))).size, 64);
});

Deno.test("uploads read apart share their workers, and the bytes are moved there", async () => {
  const body = json({
    files: { "HOOK.md": hookMd("a"), "notes.txt": "n".repeat(APART_UPLOAD_BYTES) },
  });
  const before = unpackWorkersStarted();
  for (let i = 0; i < 5; i++) {
    const sent = body.slice();
    assert.equal((await parseUploadApart(sent)).size, 2);
    assert.equal(sent.byteLength, 0, "moved, not copied");
  }
  // Starting a worker holds the server's request thread ~10 ms: one serves them all.
  assert.ok(unpackWorkersStarted() - before <= 1, "the uploads reuse a worker");
});

Deno.test("an uploaded folder's manifest read on the worker gives what reading it in place gives", async () => {
  const wasm = await pluginBytes("guard_wasi");
  const folders: Record<string, Record<string, string | Uint8Array>> = {
    "a valid hook": { "HOOK.md": hookMd("guard", "priority: 7\n"), "plugin.wasm": wasm },
    "several bad fields": {
      "HOOK.md": hookMd("guard", "priority: high\ntimeout: -1\n"),
      "plugin.wasm": wasm,
    },
    // 16 KiB of nesting: the YAML parser runs out of stack after tens of milliseconds.
    "nested brackets": { "HOOK.md": hookMd("guard", `x: ${"[".repeat(16_000)}\n`) },
    "another name": { "HOOK.md": hookMd("other"), "plugin.wasm": wasm },
    "no HOOK.md": { "plugin.wasm": wasm },
  };
  const outcomes = new Map<string, unknown>();
  for (const [what, files] of Object.entries(folders)) {
    const root = await tempDir("hookbox-upload-");
    const dir = `${root}/guard`;
    await Deno.mkdir(dir);
    for (const [path, data] of Object.entries(files)) {
      if (typeof data === "string") await Deno.writeTextFile(`${dir}/${path}`, data);
      else await Deno.writeFile(`${dir}/${path}`, data);
    }
    const here = await loadHook(denoFs, dir, "tenant").then(
      (hook) => ({ hook }),
      (err: unknown) => ({ problems: hookProblems(err) }),
    );
    const there = await loadHookApart(dir).then(
      (hook) => ({ hook }),
      (err: unknown) => ({ problems: err instanceof HookRejected ? err.problems : err }),
    );
    // Where the parser runs out of stack depends on the thread's stack: the message says where.
    const where = (v: unknown) =>
      JSON.parse(JSON.stringify(v).replace(/ at line \d+, column \d+:[^"]*/g, ""));
    assert.deepEqual(where(there), where(here), what);
    outcomes.set(what, there);
  }
  assert.equal(
    (outcomes.get("a valid hook") as { hook: { manifest: { priority: number } } }).hook
      .manifest.priority,
    7,
  );
  const bad = (what: string) => (outcomes.get(what) as { problems: { code: string }[] }).problems;
  assert.equal(bad("several bad fields").length, 2);
  assert.equal(bad("nested brackets")[0]!.code, "HOOK_MANIFEST_INVALID");
  assert.equal(bad("another name")[0]!.code, "HOOK_NAME_MISMATCH");
  assert.equal(bad("no HOOK.md")[0]!.code, "HOOK_MANIFEST_MISSING");
});
