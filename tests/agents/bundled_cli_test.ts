/**
 * The bundled one-shot CLI (`scripts/build_cli.ts` → `dist/cli/hookbox`), as
 * an agent runs it: built from this checkout, run through its shell wrapper
 * from another folder, answering in the agent's protocol with the same hooks
 * and caches as the CLI from source.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { ROOT, runWithStdin, tempDir } from "../_helpers.ts";
import { claudeBash, GUARD_REASON, writeAgentHooks } from "./_agent_hooks.ts";
import { eventually, hookMd, killIfRunning } from "../_helpers.ts";
import { corpus } from "../runtime-wasm/_corpus.ts";
import { environmentKey } from "../../packages/cli/daemon_client.ts";

/** The socket of the daemon for a process run with `env` (on top of this one's) in `run`. */
const socketIn = (run: string, env: Record<string, string>) =>
  `${run}/hookbox/daemon-${environmentKey({ ...Deno.env.toObject(), ...env })}.sock`;

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

function run(argv: string[], stdin: string, cwd: string) {
  return runWithStdin(argv[0]!, argv.slice(1), stdin, { cwd });
}

let building: Promise<string> | null = null;
/** Builds dist/cli once per test file run; resolves to the wrapper's path. */
function built(): Promise<string> {
  return building ??= (async () => {
    const build = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `${ROOT}/scripts/build_cli.ts`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(build.code, 0, decode(build.stderr));
    return `${ROOT}/dist/cli/hookbox`;
  })();
}

Deno.test("dist/cli/hookbox compiles a JS hook with no network and a private HOME", async () => {
  const wrapper = await built();
  const dir = await tempDir("hookbox_offline_");
  try {
    await Deno.mkdir(`${dir}/guard/scripts`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/guard/HOOK.md`,
      hookMd({ name: "guard", trigger: "pre-tool-call" }),
    );
    await Deno.writeTextFile(
      `${dir}/guard/scripts/run.mjs`,
      'import { hookFunction } from "hookbox:lib/hook_io.js";\n' +
        'export default hookFunction("guard", () => undefined);\n',
    );
    // `unshare -n`: a new network namespace with no interface but loopback (the machines run
    // as root), as an agent sandbox without network would run the hook command.
    const out = await new Deno.Command("unshare", {
      args: ["-n", wrapper, "compile", `${dir}/guard`, "--out", `${dir}/out`],
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: `${dir}/home`,
        HOOKBOX_CACHE_DIR: `${dir}/cache`,
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(out.code, 0, decode(out.stderr));
    match(decode(out.stdout), /^guard sha256:[0-9a-f]{64} \d+ bytes/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dist/cli/hookbox answers Claude Code's hooks like the CLI from source", async () => {
  const wrapper = await built();
  ok((await Deno.stat(wrapper)).mode! & 0o100, "the wrapper is executable");
  // Compilation hints (the QuickJS engine's hot functions compiled with the module) are
  // asked for exactly when this Deno's V8 takes the flag.
  const hintsFlag = "--experimental-wasm-compilation-hints";
  const takesHints = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `--v8-flags=${hintsFlag}`, ""],
    stdout: "null",
    stderr: "null",
  }).output();
  assertEquals((await Deno.readTextFile(wrapper)).includes(hintsFlag), takesHints.success);
  const dir = await tempDir("hookbox_bundled_");
  try {
    await writeAgentHooks(`${dir}/hooks`);
    const payload = (command: string) => claudeBash(command, dir);
    const args = ["dispatch", "--agent", "claude-code", "--hooks-dir", `${dir}/hooks`];
    const source = [Deno.execPath(), "run", "-A", `${ROOT}/packages/cli/main.ts`, ...args];
    for (const command of ["rm -rf /", "ls"]) {
      const bundled = await run([wrapper, ...args], payload(command), dir);
      const fromSource = await run(source, payload(command), dir);
      assertEquals(
        [bundled.exitCode, bundled.stdout],
        [fromSource.exitCode, fromSource.stdout],
        bundled.stderr,
      );
    }
    const denied = await run([wrapper, ...args], payload("rm -rf /"), dir);
    const answer = JSON.parse(denied.stdout).hookSpecificOutput;
    assertEquals(answer.permissionDecision, "deny");
    ok(answer.permissionDecisionReason.includes(GUARD_REASON));
    const allowed = await run([wrapper, ...args], payload("ls"), dir);
    assertEquals([allowed.exitCode, allowed.stdout], [0, ""]);
    // A bad command line is a one-line usage error, worded as from source (the bundle
    // parses flags with Node's parseArgs polyfill, not node:util).
    const badFlag = [...args, "--bogus"];
    const bundledBad = await run([wrapper, ...badFlag], payload("ls"), dir);
    const sourceBad = await run([...source, "--bogus"], payload("ls"), dir);
    assertEquals([bundledBad.exitCode, bundledBad.stderr], [
      1,
      "hookbox: Unknown option '--bogus'\n",
    ]);
    assertEquals([sourceBad.exitCode, sourceBad.stderr], [bundledBad.exitCode, bundledBad.stderr]);
    // The polyfill runs on the bundle's own stand-in for Node's primordials:
    // every kind of parse error reads the same as node:util's.
    for (
      const bad of [
        ["--hooks-dir"],
        ["--allow-subprocess=yes"],
        ["extra"],
        ["-ab"],
        ["--tenant"],
        ["--", "x"],
      ]
    ) {
      const b = await run([wrapper, ...args, ...bad], payload("ls"), dir);
      const s = await run([...source, ...bad], payload("ls"), dir);
      assertEquals([b.exitCode, b.stderr], [s.exitCode, s.stderr], bad.join(" "));
      match(b.stderr, /^hookbox: \S/);
    }
    const flags = [...args, "--tenant=t1", "--work-dir", dir, "--allow-subprocess"];
    const parsed = await run([wrapper, ...flags], payload("rm -rf /"), dir);
    assertEquals([parsed.exitCode, parsed.stdout], [denied.exitCode, denied.stdout]);
    const built = [...Deno.readDirSync(`${ROOT}/dist/cli`)].filter((e) => e.name.endsWith(".js"));
    for (const e of built) {
      const code = await Deno.readTextFile(`${ROOT}/dist/cli/${e.name}`);
      ok(!/["']node:util["']/.test(code), `${e.name} imports node:util`);
      ok(!code.includes("contains a reference cycle"), `${e.name} holds zod's schema compiler`);
    }
    // zod and the RE2 engine load only when needed: the dispatch command's static module
    // graph does not import them, and an invalid event (zod's message), a JSON hook output
    // (the deny above) and a regex matcher (below) read as from source.
    for (const onDemand of ["./zod.js", "./re2js.js"]) {
      const eager = eagerImports(`${ROOT}/dist/cli`, onDemand);
      assertEquals(eager, [], `chunks loaded by dispatch that import ${onDemand} at start`);
    }
    // No Node built-in in dispatch's static graph: loading Deno's Node layer costs a hook
    // command ~19 ms of start-up (node:crypto; node:async_hooks ~9 ms).
    const builtins = [...staticGraph(`${ROOT}/dist/cli`)].flatMap((name) =>
      [...Deno.readTextFileSync(`${ROOT}/dist/cli/${name}`).matchAll(NODE_IMPORT)].map((m) =>
        `${name}: ${m[1]}`
      )
    );
    assertEquals(builtins, [], "Node built-ins dispatch loads at start");
    // Nor the compilers' modules, which a cached call loads to name its JS and AssemblyScript
    // hooks' plugins (the AssemblyScript one loaded node:os, ~10 ms of every such call).
    for (const compiler of ["js", "as"]) {
      const root = [...Deno.readDirSync(`${ROOT}/dist/cli`)].find((e) =>
        new RegExp(`^${compiler}-\\w+\\.js$`).test(e.name)
      )!.name;
      const loaded = [...staticGraph(`${ROOT}/dist/cli`, [root])].flatMap((name) =>
        [...Deno.readTextFileSync(`${ROOT}/dist/cli/${name}`).matchAll(NODE_IMPORT)].map((m) =>
          `${name}: ${m[1]}`
        )
      );
      assertEquals(loaded, [], `Node built-ins ${root} loads`);
    }
    // The Extism SDK loads only for a plugin that can reach its kernel (none here).
    const sdkChunks = [...Deno.readDirSync(`${ROOT}/dist/cli`)].filter((e) =>
      e.name.endsWith(".js") &&
      Deno.readTextFileSync(`${ROOT}/dist/cli/${e.name}`).includes('"extism-worker"')
    ).map((e) => `./${e.name}`);
    assertEquals(sdkChunks.length, 1, "the SDK is one chunk of the bundle");
    assertEquals(eagerImports(`${ROOT}/dist/cli`, sdkChunks[0]!), []);
    ok(!staticGraph(`${ROOT}/dist/cli`).has(sdkChunks[0]!.slice(2)), "dispatch loads the SDK");
    // A matcher that needs the (deferred) RE2 engine matches as from source.
    const regexHooks = `${dir}/regex-hooks`;
    await Deno.mkdir(`${regexHooks}/re`, { recursive: true });
    await Deno.writeTextFile(
      `${regexHooks}/re/HOOK.md`,
      hookMd({ name: "re", trigger: "pre-tool-call", matcher: { pattern: "rm\\s+-rf" } }),
    );
    await Deno.writeFile(`${regexHooks}/re/plugin.wasm`, await corpus("block_wasi"));
    const regexArgs = ["dispatch", "--agent", "claude-code", "--hooks-dir", regexHooks];
    for (const command of ["rm   -rf x", "ls -rf"]) {
      const b = await run([wrapper, ...regexArgs], payload(command), dir);
      const s = await run(
        [Deno.execPath(), "run", "-A", `${ROOT}/packages/cli/main.ts`, ...regexArgs],
        payload(command),
        dir,
      );
      assertEquals([b.exitCode, b.stdout], [s.exitCode, s.stdout], command);
      assertEquals(b.stdout.includes('"deny"'), command.startsWith("rm"), b.stdout);
    }
    const badEvent = JSON.stringify({
      event_type: "pre_tool_call",
      session_id: "s",
      tool_name: "Bash",
      tool_input: { command: "ls" },
      timestamp: "yesterday",
    });
    const plainArgs = ["dispatch", "--hooks-dir", `${dir}/hooks`];
    const bundledInvalid = await run([wrapper, ...plainArgs], badEvent, dir);
    const sourceInvalid = await run(
      [Deno.execPath(), "run", "-A", `${ROOT}/packages/cli/main.ts`, ...plainArgs],
      badEvent,
      dir,
    );
    assertEquals([bundledInvalid.exitCode, bundledInvalid.stderr], [
      sourceInvalid.exitCode,
      sourceInvalid.stderr,
    ]);
    match(bundledInvalid.stderr, /EVENT_INVALID: event field "timestamp"/);
    // The other commands have zod and RE2 from their start: validation reads as from source.
    await Deno.mkdir(`${dir}/bad/x`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/bad/x/HOOK.md`,
      "---\nname: x\ndescription: d\ntrigger: pre-tool-call\nmatcher:\n  pattern: '(a+'\n---\n",
    );
    for (
      const cmd of [["validate", `${dir}/hooks`, regexHooks, `${dir}/bad`], [
        "list",
        "--hooks-dir",
        regexHooks,
        "--json",
      ]]
    ) {
      const b = await run([wrapper, ...cmd], "", dir);
      const s = await run(
        [Deno.execPath(), "run", "-A", `${ROOT}/packages/cli/main.ts`, ...cmd],
        "",
        dir,
      );
      assertEquals([b.exitCode, b.stdout, b.stderr], [s.exitCode, s.stdout, s.stderr], cmd[0]);
      ok(!b.stderr.includes("INTERNAL"), b.stderr);
    }
    // Commands that start workers or bundle sources run from source only, and say so.
    const serve = await run([wrapper, "serve"], "", dir);
    assertEquals(serve.exitCode, 1);
    match(serve.stderr, /run it from source: deno run -A packages\/cli\/main\.ts serve/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const STATIC_IMPORT = /(?:import|export)\s*(defer\s*)?(?:[\w$*{},\s]*?\bfrom\s*)?"(\.\/[^"]+)"/g;

/** A static import of a Node built-in. */
const NODE_IMPORT = /(?:import|export)\s*(?:[\w$*{},\s]*?\bfrom\s*)?"(node:[^"]+)"/g;

/**
 * The files of the static module graph of `roots` (by default `hookbox.js` and
 * its dispatch chunk; `import defer` left out, and import statements in the
 * code's strings, which name no `.js` file of the bundle).
 */
function staticGraph(dir: string, roots?: string[]): Set<string> {
  const dispatch = [...Deno.readDirSync(dir)].find((e) => /^dispatch-.*\.js$/.test(e.name))!.name;
  const seen = new Set<string>();
  const stack = roots ?? ["hookbox.js", dispatch];
  while (stack.length > 0) {
    const name = stack.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const [, defer, spec] of Deno.readTextFileSync(`${dir}/${name}`).matchAll(STATIC_IMPORT)) {
      if (!defer && spec!.endsWith(".js")) stack.push(spec!.slice(2));
    }
  }
  ok(seen.size > 5, `walked ${[...seen]}`);
  return seen;
}

/** The files of {@linkcode staticGraph} that import `target` without `import defer`. */
function eagerImports(dir: string, target: string): string[] {
  return [...staticGraph(dir)].filter((name) =>
    [...Deno.readTextFileSync(`${dir}/${name}`).matchAll(STATIC_IMPORT)].some(([, defer, spec]) =>
      spec === target && !defer
    )
  );
}

/** Runs `argv` with `stdin` bytes and `env`; its exit code, stdout and stderr. */
async function runBytes(
  argv: string[],
  stdin: Uint8Array,
  cwd: string,
  env: Record<string, string>,
  signal?: AbortSignal,
) {
  const child = new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    cwd,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    ...(signal ? { signal } : {}),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(stdin).catch(() => {});
  await writer.close().catch(() => {});
  const out = await child.output();
  return {
    code: out.code,
    signal: out.signal,
    stdout: decode(out.stdout),
    stderr: decode(out.stderr),
  };
}

Deno.test("dist/cli/hookbox answers daemon calls without Deno as the CLI's own client does, else hands over", async () => {
  const wrapper = await built();
  // Built with the machine's C compiler (scripts/setup installs one): a native program.
  const head = (await Deno.readFile(wrapper)).subarray(0, 4);
  assertEquals([...head], [0x7f, 0x45, 0x4c, 0x46], "dist/cli/hookbox is an ELF program");
  const dir = await tempDir("hookbox_client_");
  const run = `${dir}/run`;
  await Deno.mkdir(run, { mode: 0o700 });
  const env = { XDG_RUNTIME_DIR: run, XDG_CONFIG_HOME: `${dir}/config` };
  const status = async () => {
    const out = await runBytes([wrapper, "daemon", "status"], new Uint8Array(), dir, env);
    return out.code === 0 ? JSON.parse(out.stdout) as { pid: number; answered: number } : null;
  };
  let pid: number | null = null;
  let otherPid: number | null = null;
  try {
    await writeAgentHooks(`${dir}/hooks`);
    const args = ["dispatch", "--agent", "claude-code", "--hooks-dir", `${dir}/hooks`, "--daemon"];
    const call = (stdin: Uint8Array | string, extra: Record<string, string> = {}) =>
      runBytes(
        [wrapper, ...args],
        typeof stdin === "string" ? new TextEncoder().encode(stdin) : stdin,
        dir,
        { ...env, ...extra },
      );
    const ownClient = (stdin: Uint8Array | string, extra: Record<string, string> = {}) =>
      call(stdin, { HOOKBOX_DAEMON_CLIENT: "off", ...extra });
    const deny = claudeBash("rm -rf /", dir);
    // No daemon yet: the full CLI answers and starts one for the next call.
    const first = await call(deny);
    assertEquals(first.code, 0, first.stderr);
    match(first.stdout, /"permissionDecision":"deny"/);
    const seen = await eventually(status);
    ok(seen !== null, "the daemon answers its status");
    pid = seen.pid;
    // Through the client: the same bytes and exit code as through the CLI's own client.
    for (const stdin of [deny, claudeBash("ls", dir), "{not json"]) {
      const before = (await status())!.answered;
      const small = await call(stdin);
      assertEquals((await status())!.answered, before + 1, "answered by the daemon");
      const own = await ownClient(stdin);
      assertEquals(small, own, stdin);
    }
    // Not for the client (another environment, stdin that is not UTF-8 or more than it takes, a
    // folder open to others): the full CLI gets the same stdin and answers as without the client
    // (through the daemon where the CLI's own client would use it).
    const notUtf8 = new Uint8Array([
      ...new TextEncoder().encode(deny.slice(0, -2)),
      0xff,
      0x22,
      0x7d,
    ]);
    const huge = new TextEncoder().encode(
      JSON.stringify({ ...JSON.parse(deny), pad: "x".repeat(17 * 1024 * 1024) }),
    );
    const cases: [string, Uint8Array | string, Record<string, string>][] = [
      ["another environment", deny, { HOOKBOX_GREETING: "hi" }],
      ["not UTF-8", notUtf8, {}],
      ["over 16 MiB", huge, {}],
    ];
    for (const [name, stdin, extra] of cases) {
      const small = await call(stdin, extra);
      const own = await ownClient(stdin, extra);
      assertEquals(small, own, name);
      // Every byte reached the CLI: past the cap, the whole input is refused as too large.
      if (name === "over 16 MiB") match(small.stderr, /LIMIT_INPUT: stdin is over the/);
      else match(small.stdout, /"permissionDecision":"deny"/, name);
    }
    const before = (await status())!.answered;
    await call(deny, { HOOKBOX_GREETING: "hi" });
    assertEquals((await status())!.answered, before, "another environment: not through the daemon");
    // That environment has a daemon of its own (started by its first call): the C client finds
    // its socket by the same key as the CLI (environmentKey) and is answered by it.
    const greeting = { ...env, HOOKBOX_GREETING: "hi" };
    const otherStatus = async () => {
      const out = await runBytes([wrapper, "daemon", "status"], new Uint8Array(), dir, greeting);
      return out.code === 0 ? JSON.parse(out.stdout) as { pid: number; answered: number } : null;
    };
    const other = await eventually(otherStatus);
    ok(other !== null && other.pid !== pid, "the other environment's daemon answers");
    otherPid = other.pid;
    match((await call(deny, { HOOKBOX_GREETING: "hi" })).stdout, /"permissionDecision":"deny"/);
    assertEquals((await otherStatus())!.answered, other.answered + 1, "answered by its daemon");
    assertEquals((await status())!.answered, before);
    await Deno.chmod(`${run}/hookbox`, 0o755);
    const open = await call(deny);
    match(open.stdout, /"permissionDecision":"deny"/);
    match(open.stderr, /the daemon is not used: .* is open to others \(mode 755\)/);
    await Deno.chmod(`${run}/hookbox`, 0o700);
    // A framed call the daemon cannot parse is refused; the daemon goes on answering.
    const conn = await Deno.connect({ transport: "unix", path: socketIn(run, env) });
    await conn.write(new TextEncoder().encode("HBX1 9\n3:abc9:xx"));
    const refused = new Uint8Array(64);
    const n = await conn.read(refused);
    conn.close();
    assertEquals(decode(refused.subarray(0, n ?? 0)), "HBX1 no\n");
    const after = await call(deny);
    assertEquals(after, first);
  } finally {
    killIfRunning(pid);
    killIfRunning(otherPid);
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * A stand-in for a wedged daemon on the user's socket: it takes every call and never answers,
 * or (`trickle`) answers a byte every 100 ms without end.
 */
function wedgedDaemon(path: string, trickle: boolean): { close(): void } {
  const listener = Deno.listen({ transport: "unix", path });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) {
      held.push(conn);
      if (!trickle) continue;
      (async () => {
        for (let i = 0;; i++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          await conn.write(new TextEncoder().encode(i === 0 ? "HBX1 0 " : "9"));
        }
      })().catch(() => {});
    }
  })().catch(() => {});
  return {
    close() {
      for (const conn of held) conn.close();
      listener.close();
    },
  };
}

Deno.test("a daemon that does not answer in time is given up: the guards answer, and it is replaced", async () => {
  const wrapper = await built();
  const dir = await tempDir("hookbox_wedged_");
  const pids: number[] = [];
  try {
    await writeAgentHooks(`${dir}/hooks`);
    const args = ["dispatch", "--agent", "claude-code", "--hooks-dir", `${dir}/hooks`, "--daemon"];
    const deny = new TextEncoder().encode(claudeBash("rm -rf /", dir));
    let n = 0;
    for (const trickle of [false, true]) {
      for (const client of ["dist/cli/hookbox", "the CLI's own"]) {
        const name = `${trickle ? "trickling" : "silent"} daemon, ${client} client`;
        // A socket folder of each case's own: a closed listener may take its path with it.
        const run = `${dir}/run${n++}`;
        await Deno.mkdir(`${run}/hookbox`, { recursive: true, mode: 0o700 });
        await Deno.chmod(`${run}/hookbox`, 0o700);
        const env = {
          XDG_RUNTIME_DIR: run,
          XDG_CONFIG_HOME: `${dir}/config`,
          HOOKBOX_DAEMON_WAIT_MS: "1000",
        };
        const status = async () => {
          const out = await runBytes([wrapper, "daemon", "status"], new Uint8Array(), dir, env);
          return out.code === 0
            ? JSON.parse(out.stdout) as { pid: number; answered: number }
            : null;
        };
        const wedged = wedgedDaemon(socketIn(run, env), trickle);
        try {
          // Copilot lets the action through once a hook call has run 30 s: this one must end first.
          const out = await runBytes([wrapper, ...args], deny, dir, {
            ...env,
            ...(client === "dist/cli/hookbox" ? {} : { HOOKBOX_DAEMON_CLIENT: "off" }),
          }, AbortSignal.timeout(30_000));
          const said = `${name}: ${out.stdout} ${out.stderr}`;
          assertEquals(out.signal, null, `${name}: ended by itself`);
          assertEquals(out.code, 0, said);
          match(out.stdout, /"permissionDecision":"deny"/, said);
          match(
            out.stderr,
            /hookbox: the daemon did not answer within 1 s; this call runs in its own process/,
            said,
          );
          // A daemon takes the wedged one's place, and answers the next call.
          const fresh = await eventually(status);
          ok(fresh !== null, `${name}: a new daemon answers`);
          pids.push(fresh.pid);
          const next = await runBytes([wrapper, ...args], deny, dir, env);
          match(next.stdout, /"permissionDecision":"deny"/, name);
          assertEquals((await status())!.answered, fresh.answered + 1, `${name}: by the daemon`);
        } finally {
          wedged.close();
        }
      }
    }
  } finally {
    for (const pid of pids) killIfRunning(pid);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a call whose daemon was late ends its hooks by the call's deadline: a closed guard blocks", async () => {
  const wrapper = await built();
  const dir = await tempDir("hookbox_deadline_");
  try {
    await Deno.mkdir(`${dir}/hooks/guard`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/hooks/guard/HOOK.md`,
      hookMd({ name: "guard", trigger: "pre-tool-call", on_error: "closed" }),
    );
    await Deno.writeFile(`${dir}/hooks/guard/plugin.wasm`, await corpus("guard_wasi"));
    const args = ["dispatch", "--agent", "claude-code", "--hooks-dir", `${dir}/hooks`];
    const ls = new TextEncoder().encode(claudeBash("ls", dir));
    const env = { XDG_CONFIG_HOME: `${dir}/config`, HOOKBOX_CACHE_DIR: `${dir}/cache` };
    const inTime = await runBytes([wrapper, ...args], ls, dir, env);
    assertEquals(inTime.code, 0, inTime.stderr);
    ok(!inTime.stdout.includes('"deny"'), `the guard allows ls: ${inTime.stdout}`);
    const late = await runBytes([wrapper, ...args], ls, dir, {
      ...env,
      HOOKBOX_DAEMON_DEADLINE: String(Date.now() - 1000),
    });
    assertEquals(late.code, 0, late.stderr);
    match(late.stdout, /"permissionDecision":"deny"/);
    match(late.stdout, /guard.*timeout/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
