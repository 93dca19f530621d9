/**
 * The deployment kit in `deploy/` is checked by the tools that will read it:
 * HAProxy parses its configuration (the scale-out test also runs it), systemd
 * verifies the unit, and the container recipe is linted here (building it
 * needs Docker Hub, which this machine cannot reach): known instructions,
 * a pinned base image, sources that exist, a non-root user, a health check,
 * the port it serves on, and the Deno version CI installs.
 */
import assert from "node:assert/strict";
import { ROOT, tempDir } from "./_helpers.ts";

async function run(cmd: string, args: string[]) {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, output: text(out.stdout) + text(out.stderr) };
}

Deno.test("deploy/haproxy.cfg is valid for HAProxy, without warnings", async () => {
  const out = await run("haproxy", ["-c", "-f", `${ROOT}/deploy/haproxy.cfg`]);
  assert.equal(out.code, 0, out.output);
  assert.doesNotMatch(out.output, /WARNING|ALERT/, out.output);
});

Deno.test("deploy/hookbox.service passes systemd-analyze verify and starts the CLI of this checkout", async () => {
  const unit = await Deno.readTextFile(`${ROOT}/deploy/hookbox.service`);
  const exec = /^ExecStart=(\S+) run -A \/opt\/hookbox\/(\S+) serve$/m.exec(unit);
  assert.ok(exec, "ExecStart runs deno on the CLI");
  assert.ok((await Deno.stat(`${ROOT}/${exec[2]}`)).isFile, exec[2]);
  // verify checks that the program exists: point it at this machine's deno.
  const dir = await tempDir("hookbox-unit-");
  try {
    await Deno.writeTextFile(`${dir}/hookbox.service`, unit.replace(exec[1]!, Deno.execPath()));
    const out = await run("systemd-analyze", ["verify", `${dir}/hookbox.service`]);
    assert.equal(out.code, 0, out.output);
    assert.equal(out.output.trim(), "", out.output);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  assert.match(unit, /^KillSignal=SIGTERM$/m);
  assert.match(unit, /^NoNewPrivileges=yes$/m);
  assert.match(unit, /^User=hookbox$/m);
});

const INSTRUCTIONS = new Set([
  "FROM",
  "RUN",
  "COPY",
  "WORKDIR",
  "USER",
  "ENV",
  "EXPOSE",
  "HEALTHCHECK",
  "STOPSIGNAL",
  "ENTRYPOINT",
  "CMD",
  "ARG",
  "LABEL",
]);

Deno.test("deploy/Dockerfile: known instructions, pinned base, existing sources, non-root, health-checked", async () => {
  const text = await Deno.readTextFile(`${ROOT}/deploy/Dockerfile`);
  // Instructions, with continuation lines joined.
  const steps = text.replace(/\\\n/g, " ").split("\n").map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => ({ op: l.split(/\s+/)[0]!, rest: l.slice(l.indexOf(" ") + 1).trim() }));
  for (const { op } of steps) assert.ok(INSTRUCTIONS.has(op), `unknown instruction ${op}`);
  const from = steps.filter((s) => s.op === "FROM");
  assert.equal(from.length, 1);
  assert.match(from[0]!.rest, /^[a-z]+:[a-z0-9.-]+$/, "a tagged base image");
  assert.doesNotMatch(from[0]!.rest, /:latest$/);
  for (const { rest } of steps.filter((s) => s.op === "COPY")) {
    const parts = rest.split(/\s+/);
    for (const source of parts.slice(0, -1)) {
      assert.ok(await Deno.stat(`${ROOT}/${source}`).catch(() => null), `COPY ${source} exists`);
    }
  }
  const ops = steps.map((s) => s.op);
  const user = steps.filter((s) => s.op === "USER").at(-1);
  assert.ok(user && user.rest !== "root" && user.rest !== "0", "runs as a user of its own");
  assert.ok(ops.lastIndexOf("USER") < ops.indexOf("ENTRYPOINT"));
  assert.ok(ops.includes("HEALTHCHECK"));
  assert.match(text, /HOOKBOX_PORT=(\d+)/);
  const port = /HOOKBOX_PORT=(\d+)/.exec(text)![1];
  assert.ok(steps.some((s) => s.op === "EXPOSE" && s.rest === port), `EXPOSE ${port}`);
  const entry = JSON.parse(steps.find((s) => s.op === "ENTRYPOINT")!.rest) as string[];
  assert.deepEqual(entry.slice(0, 3), ["deno", "run", "-A"]);
  assert.ok((await Deno.stat(`${ROOT}/${entry[3]}`)).isFile, entry[3]);
  assert.equal(entry[4], "serve");
  // The Deno the set-up installs (and so the one the suite ran on).
  const setup = await Deno.readTextFile(`${ROOT}/scripts/setup`);
  const pinned = `deno@${/^DENO_VERSION=([\d.]+)$/m.exec(setup)![1]!}`;
  assert.ok(text.includes(pinned), `the image installs ${pinned}`);
});
