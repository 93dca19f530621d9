/**
 * The guard the peer benchmarks share (bench_peers, bench_engine): parse a
 * 943-byte pre-tool-call event, one regex on `tool_input.command`, block or
 * allow — as a Node-style script, a function-style hook, and the function
 * quickjs-emscripten calls.
 *
 * @module
 */
import type { QuickJSWASMModule } from "quickjs-emscripten";
import { eventFor } from "./_bench_events.ts";

const command = "git status --short && ls -la src && " + "echo checking; ".repeat(40);
/** 943 bytes, like issue 12's event. */
export const EVENT_TEXT: string = eventFor(command.padEnd(943 - (eventFor("").length), "#"));
if (EVENT_TEXT.length !== 943) throw new Error(`event is ${EVENT_TEXT.length} bytes`);

const GUARD_RE = String.raw`/\brm\s+-rf\s+\//`;
/** The guard as a Node-style script (stdin, exit code 2 to block). */
export const SCRIPT: string = `const fs = require("fs");
const event = JSON.parse(fs.readFileSync(0, "utf8"));
if (${GUARD_RE}.test(event.tool_input.command)) { console.error("rm -rf / is not allowed"); process.exit(2); }
`;
/** The guard as the function quickjs-emscripten calls with the event text. */
export const FUNCTION: string = `(function (input) {
  const event = JSON.parse(input);
  return ${GUARD_RE}.test(event.tool_input.command) ? "rm -rf / is not allowed" : null;
})`;
/** The same guard as a function-style hook: evaluated once at snapshot time, then only called. */
export const FUNCTION_HOOK: string = `const GUARD = ${GUARD_RE};
export default function (event) {
  if (GUARD.test(event.tool_input.command)) return { decision: "block", reason: "rm -rf / is not allowed" };
}
`;

/** quickjs-emscripten peers: a reused context, and a new runtime + context per call. */
export function quickjsPeers(
  QuickJS: QuickJSWASMModule,
): { reused(): unknown; fresh(): unknown; usedBytes(): number } {
  const limited = () => {
    const rt = QuickJS.newRuntime();
    rt.setMemoryLimit(32 << 20);
    let budget = 0;
    rt.setInterruptHandler(() => ++budget > 1_000_000);
    return rt;
  };
  const reusedRt = limited();
  const reusedCtx = reusedRt.newContext();
  const reusedFn = reusedCtx.unwrapResult(reusedCtx.evalCode(FUNCTION));
  const call = (ctx: typeof reusedCtx, fn: typeof reusedFn): string | null => {
    const arg = ctx.newString(EVENT_TEXT);
    const result = ctx.unwrapResult(ctx.callFunction(fn, ctx.undefined, arg));
    arg.dispose();
    const reason = ctx.dump(result);
    result.dispose();
    return reason;
  };
  return {
    reused: () => call(reusedCtx, reusedFn),
    fresh: () => {
      const rt = limited();
      const ctx = rt.newContext();
      const fn = ctx.unwrapResult(ctx.evalCode(FUNCTION));
      const reason = call(ctx, fn);
      fn.dispose();
      ctx.dispose();
      rt.dispose();
      return reason;
    },
    /** What a runtime + context holds after one call (memory_used_size). */
    usedBytes: () => {
      const rt = limited();
      const ctx = rt.newContext();
      const fn = ctx.unwrapResult(ctx.evalCode(FUNCTION));
      call(ctx, fn);
      const usage = rt.computeMemoryUsage();
      const bytes = (ctx.dump(usage) as { memory_used_size: number }).memory_used_size;
      usage.dispose();
      fn.dispose();
      ctx.dispose();
      rt.dispose();
      return bytes;
    },
  };
}
