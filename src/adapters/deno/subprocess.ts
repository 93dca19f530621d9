/**
 * Subprocess runtime for Deno (SPEC §5): scrubbed environment, the hook folder
 * as working directory, the timeout enforced on the whole process group, and
 * capped output.
 *
 * @module
 */
import { type FailureCode, messageOf, runFailure } from "../../runtime/failure.ts";
import type { RunRequest, RunResult, Runtime } from "../../runtime/types.ts";
import { readCapped } from "./_capped_reader.ts";

/** How long to keep reading pipes after the process and its group are gone. */
const DRAIN_MS = 250;
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/** Options of {@linkcode createSubprocessRuntime}. */
export interface SubprocessRuntimeOptions {
  /** PATH the hook sees. @default the host's PATH, else /usr/local/bin:/usr/bin:/bin */
  path?: string;
}

/** A runtime that runs `scripts/run`, `run.sh`, `run.py` as host processes. */
export function createSubprocessRuntime(options: SubprocessRuntimeOptions = {}): Runtime {
  const path = options.path ?? Deno.env.get("PATH") ?? DEFAULT_PATH;
  return { kind: "subprocess", run: (request) => runProcess(request, path) };
}

async function runProcess(request: RunRequest, path: string): Promise<RunResult> {
  const { entry, dir } = request.hook;
  if (entry.runtime !== "subprocess") throw new TypeError("not a subprocess hook");
  const [program, ...args] = entry.command;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program!, {
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
