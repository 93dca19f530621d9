/** `hookbox bundle`: a Worker for edge runtimes from the service's store (SPEC §7). */
import { parseArgs } from "node:util";
import { parseOptions, usageLine } from "./commands.ts";
import { writeBundle } from "../deno/bundle.ts";
import { EDGE_MAX_MEMORY_MB } from "../edge/bundle_data.ts";
import { openStore } from "../deno/serve/serve.ts";
import { EXIT } from "./_io.ts";

/** Writes the bundle; returns the exit code. */
export async function bundleCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: parseOptions("bundle"),
    strict: true,
  });
  if (values.out === undefined) {
    console.error(`hookbox bundle: --out DIR is required\nusage: ${usageLine("bundle")}`);
    return EXIT.bad;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    console.error(`hookbox bundle: --port must be 1-65535, got ${values.port}`);
    return EXIT.bad;
  }
  const date = values["compatibility-date"];
  if (date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    console.error(`hookbox bundle: --compatibility-date must be YYYY-MM-DD, got ${date}`);
    return EXIT.bad;
  }
  const auditUrl = values["audit-url"];
  if (auditUrl !== undefined && !/^https?:\/\/[^/]/.test(auditUrl)) {
    console.error(`hookbox bundle: --audit-url must be an http(s) URL, got ${auditUrl}`);
    return EXIT.bad;
  }
  // A bundle reads a store; it never makes an empty one (a mistyped path bundled 0 tenants).
  const store = await openStore(values.db, { mustExist: true });
  if (Deno.stderr.isTerminal()) {
    console.error("hookbox bundle: preparing every bundled tenant's plugins …");
  }
  try {
    const summary = await writeBundle({
      store,
      out: values.out,
      port,
      ...(values.tenant ? { tenants: values.tenant } : {}),
      ...(date ? { compatibilityDate: date } : {}),
      ...(auditUrl ? { auditUrl } : {}),
    });
    console.error(
      `hookbox bundle: ${summary.tenants.length} tenants, ${summary.hooks} hooks, ${summary.plugins} prepared plugins in ${summary.modules} modules` +
        `${
          summary.failures ? ` (${summary.failures} refused, reported per call)` : ""
        }, worker.js ${summary.workerBytes} bytes (+ ${summary.chunkBytes} loaded on demand)\n` +
        (summary.memoryLowered > 0
          ? `hookbox bundle: ${summary.memoryLowered} hook(s) ask for more than the ${EDGE_MAX_MEMORY_MB} MiB of memory a Worker gives a hook: there they run with ${EDGE_MAX_MEMORY_MB} MiB (past it: limit/LIMIT_MEMORY, as their on_error says)\n`
          : "") +
        `run: ${
          auditUrl ? "HOOKBOX_AUDIT_KEY=<admin key> " : ""
        }workerd serve ${values.out}/config.capnp --socket-addr http=127.0.0.1:${port}`,
    );
    return EXIT.allow;
  } catch (err) {
    console.error(`hookbox bundle: ${err instanceof Error ? err.message : err}`);
    return EXIT.bad;
  } finally {
    await store.close();
  }
}
