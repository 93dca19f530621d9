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
import { failure, HALTS } from "../instance/_halt.ts";
import type { GuestHost } from "../_host.ts";
import { httpFunctions, type HttpSession } from "../http/_http.ts";
import { kernelCallFuel } from "../_fuel.ts";
import { shieldAll } from "./_shield.ts";

/** The parts of the SDK's CallContext we use. */
export interface ExtismContext {
  alloc(size: bigint): bigint;
  read(addr: bigint): { byteLength: number; bytes(): Uint8Array; string(): string } | null;
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

/**
 * Host bytes counted per Extism block or variable beyond its contents (the
 * SDK's bookkeeping of a block: its entry, offsets, a typed array's header),
 * so zero-size blocks count against the memory cap like any other.
 */
export const BLOCK_OVERHEAD = 128;

/** Most Extism blocks one call may allocate: past it the call stops with `limit`/`memory`. */
export const MAX_BLOCKS = 65_536;

/** Logging is off: `get_log_level` answers a level above every real one. */
const LOG_OFF = 0x7fffffff;

/** An i64 argument as the unsigned number it stands for. */
function unsigned(value: bigint): bigint {
  return BigInt.asUintN(64, value);
}

/**
 * Overrides merged into the SDK's `extism:host/env` namespace. `http` is the
 * instance's HTTP session (worker mode); null refuses `http_request`. Every
 * size and offset is read as unsigned and checked before use; every byte the
 * host keeps for the guest (blocks, variables, the copies `var_get` hands
 * back) is counted against its budget ({@linkcode GuestHost.keep}).
 */
export function extismOverrides(
  host: GuestHost,
  http: HttpSession | null = null,
): Record<string, HostFunction> {
  // Each call's own cost is charged by the shield around every function (`kernelCallFuel`).
  const log = () => {};
  const overrides: Record<string, HostFunction> = {
    alloc: (ctx, size: bigint) => {
      const bytes = unsigned(size); // -1 is 2^64 - 1: far over any budget, so keep() halts
      // A block costs the host its bookkeeping too: alloc(0) in a loop is not free.
      host.keep(Number(bytes) + BLOCK_OVERHEAD);
      if (++host.blocks > MAX_BLOCKS) host.halt(HALTS.memory);
      return ctx.alloc(bytes);
    },
    output_set: (ctx, addr: bigint, length: bigint) => {
      const data = block(host, ctx, addr);
      const n = unsigned(length);
      if (n > BigInt(data.length)) {
        host.halt(failure("TRAP", "output_set: length past the block"));
      }
      if (!host.stdout.replace(data.subarray(0, Number(n)))) host.halt(HALTS.output);
    },
    error_set: (ctx, addr: bigint) => {
      if (!host.stderr.replace(block(host, ctx, addr))) host.halt(HALTS.output);
    },
    var_get: (ctx, keyAddr: bigint) => {
      const value = host.vars.get(keyOf(host, ctx, keyAddr));
      if (value === undefined) return 0n;
      host.keep(value.length); // the SDK stores a fresh block for the guest
      host.copied(value.length);
      return ctx.store(value);
    },
    var_set: (ctx, keyAddr: bigint, valueAddr: bigint) => {
      const key = keyOf(host, ctx, keyAddr);
      if (valueAddr === 0n) return void host.vars.delete(key);
      const value = block(host, ctx, valueAddr, "var_set");
      host.keep(value.length + key.length + BLOCK_OVERHEAD);
      host.vars.set(key, value.slice());
    },
    // Served from the same private copy the SDK's input block holds, without
    // the SDK's per-call block lookups.
    input_length: () => BigInt(host.input.length),
    input_load_u64: (_ctx, offset: bigint) => {
      const at = unsigned(offset);
      if (at + 8n > BigInt(host.input.length)) inputFault(host, at);
      return host.inputView.getBigUint64(Number(at), true);
    },
    input_load_u8: (_ctx, offset: bigint) => {
      const at = unsigned(offset);
      if (at >= BigInt(host.input.length)) inputFault(host, at);
      return host.inputView.getUint8(Number(at));
    },
    config_get: () => 0n,
    ...httpFunctions(host, http),
    log_warn: log,
    log_info: log,
    log_debug: log,
    log_error: log,
    log_trace: log,
    get_log_level: () => LOG_OFF,
  };
  // Shielded and priced here: the guest calls these as given, not the SDK's copies that
  // `shieldKernel` wraps (measured: input_load_u8 went uncharged through that path).
  shieldAll(host, overrides, kernelCallFuel);
  return overrides;
}

// Blocks the host reads are charged per byte before they are copied: a loop
// re-setting one large output or variable costs fuel by its size.
function keyOf(host: GuestHost, ctx: ExtismContext, addr: bigint): string {
  const data = ctx.read(addr);
  if (data === null) host.halt(failure("TRAP", "var key: invalid memory block"));
  host.copied(data.byteLength);
  return data.string();
}

function block(host: GuestHost, ctx: ExtismContext, addr: bigint, what = "block"): Uint8Array {
  const data = ctx.read(addr);
  if (data === null) host.halt(failure("TRAP", `${what}: invalid memory block`));
  host.copied(data.byteLength);
  return data.bytes();
}

function inputFault(host: GuestHost, at: bigint): never {
  return host.halt(failure("TRAP", `input offset ${at} is past the input`));
}

/**
 * Shields every function of the SDK's kernel namespace so that none of them
 * can throw an exception the guest could catch (see `_shield.ts`), and prices
 * each call (`kernelCallFuel`) but those named in `overridden`, which
 * {@linkcode extismOverrides} shields and prices where it makes them.
 */
export function shieldKernel(
  host: GuestHost,
  ctx: ExtismContext,
  overridden: ReadonlySet<string>,
): void {
  const holder = ctx as unknown as Record<symbol, unknown>;
  for (const key of Object.getOwnPropertySymbols(holder)) {
    const value = holder[key] as Record<string, HostFunction> | null;
    if (typeof value?.load_u8 === "function" && typeof value.alloc === "function") {
      // What `extismOverrides` serves is priced there, not again.
      return shieldAll(host, value, (name) => overridden.has(name) ? 0 : kernelCallFuel(name));
    }
  }
  throw new Error("@extism/extism kernel namespace not found: the SDK changed");
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
