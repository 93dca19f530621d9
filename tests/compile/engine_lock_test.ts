/**
 * The engine build's lock is never held by a process that is gone. An
 * agent's hook call that builds the engine (a fresh checkout, sources
 * changed by a pull) exits or is killed when its event's deadline passes,
 * mid-build: its lock stayed for 15 minutes, and every later call waited its
 * whole deadline on it and then failed (a closed guard blocked every call),
 * while the build handed over to the background waited on the same lock.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { ROOT, tempDir } from "../_helpers.ts";
import { lockAbandoned, withLock } from "../../packages/compile/_js_lock.ts";

/** Starts a process that takes the lock at `path` and keeps it; resolves once it holds it. */
async function holder(path: string): Promise<Deno.ChildProcess> {
  const script = `${path}.holder.ts`;
  await Deno.writeTextFile(
    script,
    `import { withLock } from ${JSON.stringify(`${ROOT}/packages/compile/_js_lock.ts`)};\n` +
      `await withLock(${JSON.stringify(path)}, async () => {\n` +
      `  console.log("held");\n` +
      `  await new Promise(() => {});\n` +
      `});\n`,
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("held")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the holder exited before it held the lock: ${text}`);
    text += value;
  }
  reader.releaseLock();
  return child;
}

/** `promise`, or a failure naming `what` if it has not settled after `ms` (a hang, not a timing). */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a lock whose holder was killed is taken at once, a live holder's never", async () => {
  const dir = await tempDir("hookbox-engine-lock-");
  try {
    const path = `${dir}/.lock`;
    const child = await holder(path);
    try {
      assertEquals(await lockAbandoned(path), false, "a running holder's lock");
    } finally {
      child.kill("SIGKILL");
      await child.status;
      await child.stdout.cancel().catch(() => {});
    }
    // Left behind with a fresh time stamp: the holder is gone, not the lock.
    ok((await Deno.stat(path)).isDirectory, "the killed holder's lock is still there");
    assertEquals(await lockAbandoned(path), true, "a killed holder's lock");
    // The old rule waited 15 minutes for its age; the next build takes it over at once.
    const ran = await within(withLock(path, () => Promise.resolve("ran")), 60_000, "withLock");
    assertEquals(ran, "ran");
    assertEquals(await Deno.stat(path).catch(() => null), null, "released after the build");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a lock is judged by its holder, then by its age", async () => {
  const dir = await tempDir("hookbox-engine-lock-");
  try {
    const path = `${dir}/.lock`;
    // Held by this process (named as withLock names it): kept while it runs, however long ago
    // it was touched (a build on a busy machine).
    const stat = Deno.readTextFileSync("/proc/self/stat");
    const started = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    await Deno.mkdir(path);
    await Deno.writeTextFile(`${path}/owner`, `${Deno.pid}\n${started}\n${Deno.hostname()}`);
    assertEquals(await lockAbandoned(path), false, "held by this process");
    const old = new Date(Date.now() - 10 * 60_000);
    await Deno.utime(path, old, old);
    assertEquals(await lockAbandoned(path, 60_000), false, "held, untouched for 10 minutes");
    await Deno.remove(path, { recursive: true });
    // A lock whose holder has not written its name yet: its age alone.
    await Deno.mkdir(path);
    assertEquals(await lockAbandoned(path), false, "a lock just made");
    await Deno.utime(path, old, old);
    assertEquals(await lockAbandoned(path), true, "a nameless lock 10 minutes old");
    // Another machine's holder (a shared cache folder): its age alone.
    await Deno.remove(path, { recursive: true });
    await Deno.mkdir(path);
    await Deno.writeTextFile(`${path}/owner`, "1\n1\nanother-machine.example");
    assertEquals(await lockAbandoned(path), false, "another machine's fresh lock");
    await Deno.utime(path, old, old);
    assertEquals(await lockAbandoned(path), true, "another machine's lock, untouched");
    // A holder whose id now names another process (the id was reused).
    await Deno.writeTextFile(`${path}/owner`, `${Deno.pid}\n1\n${Deno.hostname()}`);
    assertEquals(await lockAbandoned(path), true, "a reused process id");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
