/**
 * The `hookbox` import namespace: `out_of_fuel`, `stack_exhausted` and
 * `grow_failed` (added by the rewriter) and `should_interrupt` (polled by
 * engines such as QuickJS from their own interrupt handlers).
 *
 * @module
 */
import { contextProbe, type ExtismContext } from "./extism/_extism.ts";
import { HALTS } from "./instance/_halt.ts";
import type { GuestHost } from "./_host.ts";
import { KERNEL_CALL_FUEL } from "./_fuel.ts";
import { shieldAll } from "./extism/_shield.ts";

/** Host functions of the `hookbox` namespace (plus the SDK context probe). */
export function hookboxFunctions(
  host: GuestHost,
  onContext: (ctx: ExtismContext) => void,
): Record<string, (...args: never[]) => unknown> {
  const functions: Record<string, (...args: never[]) => unknown> = {
    out_of_fuel: () => {
      // Unattached: a start function spent its initial fuel during instantiation.
      if (!host.meter.metered || !host.meter.refill()) host.halt(HALTS.fuel);
      host.checkAll();
    },
    stack_exhausted: () => host.halt(HALTS.stack),
    // Only recorded: the guest sees -1 and may recover. A trap or an error
    // exit later in the call is then reported as `limit` / `memory`.
    grow_failed: () => {
      host.growFailed = true;
    },
    should_interrupt: () => {
      const halt = host.pending();
      if (halt === null) return 0;
      // The engine unwinds on its own; the call still reports the limit.
      host.halted ??= halt;
      return 1;
    },
  };
  // should_interrupt is an import a guest can call in a loop: it costs what a cheap kernel call does.
  shieldAll(host, functions, (name) => name === "should_interrupt" ? KERNEL_CALL_FUEL : 0);
  functions.__context = contextProbe(onContext);
  return functions;
}
