/**
 * The Extism kernel (`extism:host/env`) as hookbox serves it. The SDK's own
 * implementation handles memory blocks and input; we override the functions
 * that touch limits or leave the sandbox: `alloc` is charged against the
 * memory cap, `output_set` / `error_set` go to the capped stdout / stderr,
 * variables live for one call only, config is empty, logs are discarded and
 * `http_request` goes through `_http.ts` (worker mode only).
 *
 * @module
 */
import { failure, HALTS } from "./_halt.ts";
import type { GuestHost } from "./_host.ts";
import { httpFunctions, type HttpSession } from "./_http.ts";

/** The parts of the SDK's CallContext we use. */
export interface ExtismContext {
  alloc(size: bigint): bigint;
  read(addr: bigint): { bytes(): Uint8Array; string(): string } | null;
  store(input: Uint8Array | string): bigint;
}

/** A host function as the SDK binds it (context first). */
// deno-lint-ignore no-explicit-any
export type HostFunction = (ctx: ExtismContext, ...args: any[]) => unknown;

/** Kernel functions of `@extism/extism` 1.0.3 plus the two newer logging ones we add. */
export const EXTISM_KERNEL: ReadonlySet<string> = new Set([
  "alloc",
  "free",
  "load_u8",
  "load_u64",
  "store_u8",
  "store_u64",
  "input_offset",
  "input_length",
  "input_load_u8",
  "input_load_u64",
  "output_set",
  "error_set",
  "config_get",
  "var_get",
  "var_set",
  "http_request",
  "http_status_code",
  "length",
  "length_unsafe",
  "log_warn",
  "log_info",
  "log_debug",
  "log_error",
  "log_trace",
  "get_log_level",
]);

/** Logging is off: `get_log_level` answers a level above every real one. */
const LOG_OFF = 0x7fffffff;

/**
 * Overrides merged into the SDK's `extism:host/env` namespace. `http` is the
 * instance's HTTP session (worker mode); null refuses `http_request`.
 */
export function extismOverrides(
  host: GuestHost,
  http: HttpSession | null = null,
): Record<string, HostFunction> {
  const log = () => host.check();
  return {
    alloc: (ctx, size: bigint) => {
      host.check();
      host.hostBytes += Number(size);
      if (host.hostBytes > host.memoryBytes) host.halt(HALTS.memory);
      return ctx.alloc(size);
    },
    output_set: (ctx, addr: bigint, length: bigint) => {
      host.check();
      const bytes = block(host, ctx, addr).subarray(0, Number(length));
      if (!host.stdout.replace(bytes)) host.halt(HALTS.output);
    },
    error_set: (ctx, addr: bigint) => {
      host.check();
      if (!host.stderr.replace(block(host, ctx, addr))) host.halt(HALTS.output);
    },
    var_get: (ctx, keyAddr: bigint) => {
      const value = host.vars.get(keyOf(host, ctx, keyAddr));
      return value === undefined ? 0n : ctx.store(value);
    },
    var_set: (ctx, keyAddr: bigint, valueAddr: bigint) => {
      host.check();
      const key = keyOf(host, ctx, keyAddr);
      if (valueAddr === 0n) host.vars.delete(key);
      else host.vars.set(key, block(host, ctx, valueAddr, "var_set").slice());
    },
    // Served from the same private copy the SDK's input block holds, without
    // the SDK's per-call block lookups.
    input_length: () => BigInt(host.input.length),
    // Offsets are relative to the input; anything past it throws (a trap).
    input_load_u64: (_ctx, offset: bigint) => host.inputView.getBigUint64(Number(offset), true),
    input_load_u8: (_ctx, offset: bigint) => host.inputView.getUint8(Number(offset)),
    config_get: () => 0n,
    ...httpFunctions(host, http),
    log_warn: log,
    log_info: log,
    log_debug: log,
    log_error: log,
    log_trace: log,
    get_log_level: () => LOG_OFF,
  };
}

function keyOf(host: GuestHost, ctx: ExtismContext, addr: bigint): string {
  const data = ctx.read(addr);
  if (data === null) host.halt(failure("error", "trap: var key: invalid memory block"));
  return data.string();
}

function block(host: GuestHost, ctx: ExtismContext, addr: bigint, what = "block"): Uint8Array {
  const data = ctx.read(addr);
  if (data === null) host.halt(failure("error", `trap: ${what}: invalid memory block`));
  return data.bytes();
}

/**
 * A host function that hands us the SDK's CallContext when the SDK binds it.
 * The foreground plugin binds every function we pass as `fn.bind(null, ctx)`
 * and keeps the context private; storing the call's input needs it.
 */
export function contextProbe(onContext: (ctx: ExtismContext) => void): HostFunction {
  const probe: HostFunction = () => 0;
  Object.defineProperty(probe, "bind", {
    value: (self: unknown, ctx: ExtismContext, ...rest: unknown[]) => {
      onContext(ctx);
      return Function.prototype.bind.call(probe, self, ctx, ...rest);
    },
  });
  return probe;
}
