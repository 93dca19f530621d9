/**
 * Every host function a guest can call runs inside a shield: an exception
 * that is not already a host halt (a plain JS error from a bad argument, a
 * bug, the SDK's own kernel functions) becomes a halt with `error`, which the
 * guest cannot catch. Without it, a guest with `catch_all` could swallow the
 * exception and carry on with the host in a half-updated state.
 *
 * @module
 */
import { failure, isStackOverflow, isStop } from "../instance/_halt.ts";
import type { GuestHost } from "../_host.ts";

// deno-lint-ignore no-explicit-any
type AnyFunction = (...args: any[]) => unknown;

/**
 * What to throw for `err`, raised inside host function `name`: halts, traps
 * and stack overflows pass through (none of them is catchable by the guest);
 * anything else becomes an `error` halt.
 */
export function fault(host: GuestHost, name: string, err: unknown): unknown {
  if (isStop(err) || err instanceof WebAssembly.RuntimeError || isStackOverflow(err)) return err;
  if (host.halted !== null) return err;
  const message = err instanceof Error ? err.message : String(err);
  try {
    host.halt(failure("HOST_FAULT", `${name}: ${message}`));
  } catch (halt) {
    return halt;
  }
}

/** `fn`, shielded (see the module doc). Keeps `fn`'s `bind` behaviour for the SDK. */
export function shield<F extends AnyFunction>(host: GuestHost, name: string, fn: F): F {
  const shielded = function (this: unknown, ...args: unknown[]) {
    try {
      return fn.apply(this, args);
    } catch (err) {
      throw fault(host, name, err);
    }
  };
  return shielded as unknown as F;
}

/**
 * Shields every function of `functions` in place. With `price`, each call is
 * first charged `price(name)` fuel (`GuestHost.check`: the one place a host
 * call's own cost is taken; 0 charges nothing).
 */
export function shieldAll(
  host: GuestHost,
  functions: Record<string, AnyFunction>,
  price?: (name: string) => number,
): void {
  for (const [name, fn] of Object.entries(functions)) {
    if (typeof fn !== "function") continue;
    const fuel = price?.(name) ?? 0;
    functions[name] = shield(
      host,
      name,
      fuel === 0 ? fn : function (this: unknown, ...args: unknown[]) {
        host.check(fuel);
        return fn.apply(this, args);
      },
    );
  }
}
