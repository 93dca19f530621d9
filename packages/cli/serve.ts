/** `hookbox serve`: the multi-tenant HTTP service of SPEC §6. */
import { logUnhandledRejections } from "../host-deno/unhandled.ts";
import { parseArgs } from "node:util";
import { parseOptionsGiven, withOtherSources } from "./commands.ts";
import { startServer } from "../deno/serve/serve.ts";
import {
  PORT_ENV,
  PROCESS_ENV,
  superviseServe,
  untilSupervisorGone,
} from "../deno/serve/processes.ts";
import { MAX_WARM_UP_EVENTS } from "../deno/serve/warm_up.ts";
import { EXIT } from "./_io.ts";

/** Runs the server until SIGINT or SIGTERM; returns the exit code. */
export async function serveCommand(args: string[]): Promise<number> {
  const { values: given } = parseArgs({
    args,
    options: parseOptionsGiven("serve"),
    strict: true,
  });
  // Flags, then HOOKBOX_* variables, then the --config file, then the defaults.
  const configPath = (given.config as string | undefined) ?? Deno.env.get("HOOKBOX_CONFIG");
  let config: Record<string, unknown> = {};
  if (configPath) {
    try {
      config = JSON.parse(await Deno.readTextFile(configPath));
    } catch (err) {
      console.error(`hookbox serve: --config ${configPath}: ${(err as Error).message}`);
      return EXIT.bad;
    }
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      console.error(`hookbox serve: --config ${configPath}: not a JSON object`);
      return EXIT.bad;
    }
  }
  let values: Record<string, string | undefined>;
  try {
    values = withOtherSources("serve", given, config) as Record<string, string | undefined>;
  } catch (err) {
    console.error(`hookbox serve: ${(err as Error).message}`);
    return EXIT.bad;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`hookbox serve: --port must be 0-65535, got ${values.port}`);
    return EXIT.bad;
  }
  const workers = values.workers === undefined ? undefined : Number(values.workers);
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 0 || workers > 256)) {
    console.error(`hookbox serve: --workers must be 0-256, got ${values.workers}`);
    return EXIT.bad;
  }
  const grace = values["shutdown-grace"] === undefined
    ? undefined
    : Number(values["shutdown-grace"]);
  if (grace !== undefined && !(grace >= 0 && grace <= 3600)) {
    console.error(
      `hookbox serve: --shutdown-grace must be 0-3600 seconds, got ${values["shutdown-grace"]}`,
    );
    return EXIT.bad;
  }
  const warmUp = values["warm-up"] === undefined ? undefined : Number(values["warm-up"]);
  if (
    warmUp !== undefined &&
    !(Number.isInteger(warmUp) && warmUp >= 0 && warmUp <= MAX_WARM_UP_EVENTS)
  ) {
    console.error(
      `hookbox serve: --warm-up must be 0-${MAX_WARM_UP_EVENTS} events, got ${values["warm-up"]}`,
    );
    return EXIT.bad;
  }
  const held: Record<string, number> = {};
  for (
    const [flag, option] of [["held-mb", "tenantHeldBytes"], ["server-held-mb", "serverHeldBytes"]]
  ) {
    if (values[flag!] === undefined) continue;
    const mib = Number(values[flag!]);
    if (!Number.isInteger(mib) || mib < 1 || mib > 1_048_576) {
      console.error(`hookbox serve: --${flag} must be 1-1048576 MiB, got ${values[flag!]}`);
      return EXIT.bad;
    }
    held[option!] = mib * 1024 * 1024;
  }
  const processes = values.processes === undefined ? 1 : Number(values.processes);
  if (!Number.isInteger(processes) || processes < 1 || processes > 64) {
    console.error(`hookbox serve: --processes must be 1-64, got ${values.processes}`);
    return EXIT.bad;
  }
  // One of N (started by the supervisor below): the supervisor's port, shared.
  const index = Deno.env.get(PROCESS_ENV);
  const child = index !== undefined && processes > 1;
  const cores = navigator.hardwareConcurrency ?? 1;
  const options = {
    port: child ? Number(Deno.env.get(PORT_ENV)) : port,
    hostname: values.hostname!,
    ...(values["admin-key-file"] ? { adminKeyFile: values["admin-key-file"] } : {}),
    ...(values["decision-log"] ? { decisionLog: values["decision-log"] } : {}),
    ...(String(values["decision-log-events"]) === "true" ? { decisionLogEvents: true } : {}),
    ...(workers === undefined
      ? processes > 1 ? { workers: Math.max(1, Math.floor(cores / processes)) } : {}
      : { workers }),
    ...(values.db === undefined ? {} : { db: values.db }),
    ...(grace === undefined ? {} : { shutdownGraceMs: Math.round(grace * 1000) }),
    ...(warmUp === undefined ? {} : { warmUpEvents: warmUp }),
    ...held,
  };
  // A rejection nobody handles is one error line, never the end of the server for every tenant.
  logUnhandledRejections();
  if (processes > 1 && !child) {
    try {
      return await superviseServe({ args, processes, serve: options });
    } catch (err) {
      console.error(`hookbox serve: ${(err as Error).message}`);
      return EXIT.bad;
    }
  }
  const server = await startServer({
    ...options,
    ...(child ? { reusePort: true, processIndex: Number(index), upkeep: Number(index) === 0 } : {}),
  });
  const stop = () => {
    server.shutdown().catch((err) => console.error(`hookbox serve: shutdown: ${err}`));
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  if (child) {
    void untilSupervisorGone().then(() => {
      console.error(JSON.stringify({
        at: new Date().toISOString(),
        level: "error",
        msg: "the supervising process is gone; stopping",
        process: Number(index),
      }));
      stop();
    });
  }
  await server.finished;
  await server.shutdown();
  return EXIT.allow;
}
