/**
 * Subprocess runtime for Deno (SPEC §5): scrubbed environment, the hook folder
 * as working directory, the timeout enforced on the whole process group, and
 * capped output.
 *
 * Containment: a process group does not hold a hook that calls `setsid` (or
 * double-forks into a new session). Where the host allows it, every hook
 * therefore runs as the first process of its own PID namespace
 * (`unshare --pid --fork --kill-child --mount-proc`, as root, or inside a new user
 * namespace otherwise): when that process ends — it exits, or is killed for a
 * limit — the kernel kills every process left in the namespace, whatever
 * session or group it moved to. Where no namespace can be made, hooks run in
 * a process group only and {@linkcode SubprocessRuntime.containment} says so.
 * On Linux the hook also runs under coreutils' `timeout` (`host-deno/outlive.ts`):
 * if this process dies before its timer fires, the hook still ends 2 s after
 * its timeout.
 *
 * @module
 */
import { type FailureCode, messageOf, runFailure } from "../core/runtime/failure.ts";
import type { RunRequest, RunResult, Runtime } from "../core/runtime/types.ts";
import { readCapped } from "../host-deno/capped_reader.ts";
import { boundedCommand } from "../host-deno/outlive.ts";

/** How long to keep reading pipes after the process and its group are gone. */
const DRAIN_MS = 250;
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/** How a hook's processes are held: a PID namespace, or only a process group. */
export type Containment = "pid-namespace" | "process-group";

/** Options of {@linkcode createSubprocessRuntime}. */
export interface SubprocessRuntimeOptions {
  /** PATH the hook sees. @default the host's PATH, else /usr/local/bin:/usr/bin:/bin */
  path?: string;
  /**
   * `auto` uses a PID namespace when `unshare` can make one and falls back to
   * a process group; `pid-namespace` refuses to run hooks without one
   * (`SPAWN_FAILED`); `process-group` never tries. @default "auto"
   */
  containment?: "auto" | Containment;
}

/** The subprocess runtime, with the containment it settled on. */
export interface SubprocessRuntime extends Runtime {
  /** What holds a hook's processes on this host (probed once, on first use). */
  containment(): Promise<Containment>;
}

/** A runtime that runs `scripts/run`, `run.sh`, `run.py` as host processes. */
export function createSubprocessRuntime(options: SubprocessRuntimeOptions = {}): SubprocessRuntime {
  const path = options.path ?? Deno.env.get("PATH") ?? DEFAULT_PATH;
  const wanted = options.containment ?? "auto";
  let probe: Promise<string[] | null> | undefined;
  const wrapper = () => {
    if (wanted === "process-group") return Promise.resolve(null);
    return probe ??= probeNamespace(path);
  };
  return {
    kind: "subprocess",
    async run(request) {
      const prefix = await wrapper();
      if (prefix === null && wanted === "pid-namespace") {
        return failed("SPAWN_FAILED", "no PID namespace available (containment: pid-namespace)");
      }
      return runProcess(request, path, prefix ?? []);
    },
    async containment() {
      return (await wrapper()) === null ? "process-group" : "pid-namespace";
    },
  };
}

/** `unshare` flags that work on this host, or null when none do. */
async function probeNamespace(path: string): Promise<string[] | null> {
  const pid = ["--pid", "--fork", "--kill-child", "--mount-proc"];
  for (const flags of [pid, ["--user", "--map-root-user", ...pid]]) {
    try {
      const { success } = await new Deno.Command("unshare", {
        args: [...flags, "--", "true"],
        clearEnv: true,
        env: { PATH: path },
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).output();
      if (success) return ["unshare", ...flags, "--"];
    } catch { /* no unshare on this host */ }
  }
  return null;
}

async function runProcess(request: RunRequest, path: string, prefix: string[]): Promise<RunResult> {
  const { entry, dir } = request.hook;
  if (entry.runtime !== "subprocess") throw new TypeError("not a subprocess hook");
  const [first, ...rest] = [...prefix, ...entry.command];
  // Killed by the coreutils wrapper a little past its timeout, even if this process dies first.
  const [program, args] = boundedCommand(first!, rest, request.limits.timeoutMs);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args,
      cwd: dir,
      clearEnv: true,
      env: { ...request.env, PATH: path },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (err) {
    return failed("SPAWN_FAILED", messageOf(err));
  }
  const killGroup = () => {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch { /* group already gone */ }
  };
  let reason: "timeout" | "output" | null = null;
  const stop = (why: "timeout" | "output") => {
    reason ??= why;
    killGroup();
  };
  const timer = setTimeout(() => stop("timeout"), request.limits.timeoutMs);
  const onAbort = () => stop("timeout");
  request.signal?.addEventListener("abort", onAbort, { once: true });
  const cap = request.limits.outputKb * 1024;
  const stdout = readCapped(child.stdout, cap, () => stop("output"));
  const stderr = readCapped(child.stderr, cap, () => stop("output"));
  void feed(child.stdin, request.input);
  const status = await child.status;
  clearTimeout(timer);
  request.signal?.removeEventListener("abort", onAbort);
  killGroup();
  const [out, err] = await Promise.all([stdout.drain(DRAIN_MS), stderr.drain(DRAIN_MS)]);
  const base = { exitCode: reason ? null : status.code, stdout: out, stderr: err };
  if (reason === "timeout") return { ...base, failure: runFailure("TIMEOUT") };
  if (reason === "output") return { ...base, failure: runFailure("LIMIT_OUTPUT") };
  if (status.signal) {
    return {
      ...base,
      exitCode: null,
      failure: runFailure("KILLED_BY_SIGNAL", String(status.signal)),
    };
  }
  return base;
}

async function feed(stdin: WritableStream<Uint8Array>, input: Uint8Array): Promise<void> {
  const writer = stdin.getWriter();
  try {
    await writer.write(input);
    await writer.close();
  } catch { /* the hook closed stdin early: not an error */ }
}

function failed(code: FailureCode, message: string): RunResult {
  return { exitCode: null, stdout: "", stderr: "", failure: runFailure(code, message) };
}
