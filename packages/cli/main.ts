/**
 * The hookbox command line: `dispatch`, `validate`, `list`, `compile`, `serve`,
 * `bundle`, `install`, `uninstall`.
 * Run with `deno run -A packages/cli/main.ts` (or `deno task hookbox`).
 *
 * Commands are imported when they run: an agent spawns `hookbox dispatch`
 * once per event, so it must not pay for loading the server, the bundler or
 * the compilers.
 *
 * @module
 */
import { errorLine, EXIT, stdinOnce, UsageError } from "./_io.ts";
import { defaultCacheDir } from "../host-deno/cache_dir.ts";
import { eventContext, prefetchPrepared } from "../deno/prepared_prefetch.ts";
import { loadRe2, loadZod } from "../core/schema/loaders.ts";
import { COMMANDS, helpText, isCommand, overview } from "./commands.ts";
import { VERSION } from "../core/version.ts";
import { nearest } from "../core/schema/near.ts";
import { useTimer } from "../core/timer.ts";
import { signalTimer } from "../host-deno/signal_timer.ts";

type Command = (args: string[]) => Promise<number>;

/** True in the bundled one-shot CLI of `scripts/build_cli.ts` (set by esbuild's `define`). */
declare const __HOOKBOX_BUNDLED__: boolean | undefined;
const BUNDLED = typeof __HOOKBOX_BUNDLED__ === "boolean" && __HOOKBOX_BUNDLED__;

/** `serve` and `bundle` start workers and bundle sources from packages/: they run from source only. */
const fromSource = (name: string) => (): Promise<Command> => {
  throw new UsageError(
    `"${name}" is not part of the bundled CLI; run it from source: deno run -A packages/cli/main.ts ${name}`,
  );
};

const LOADERS: Record<keyof typeof COMMANDS, () => Promise<Command>> = {
  dispatch: async () => (await import("./dispatch.ts")).dispatchCommand,
  validate: async () => (await import("./validate.ts")).validateCommand,
  test: async () => (await import("./test.ts")).testCommand,
  init: async () => (await import("./init.ts")).initCommand,
  list: async () => (await import("./list.ts")).listCommand,
  compile: async () => (await import("./compile.ts")).compileCommand,
  serve: BUNDLED ? fromSource("serve") : async () => (await import("./serve.ts")).serveCommand,
  bundle: BUNDLED ? fromSource("bundle") : async () => (await import("./bundle.ts")).bundleCommand,
  install: async () => (await import("./install.ts")).installCommand,
  uninstall: async () => (await import("./install.ts")).uninstallCommand,
  doctor: async () => (await import("./doctor.ts")).doctorCommand,
  tenants: async () => (await import("./ops.ts")).tenantsCommand,
  keys: async () => (await import("./ops.ts")).keysCommand,
  push: async () => (await import("./ops.ts")).pushCommand,
  hooks: async () => (await import("./ops.ts")).hooksCommand,
  audit: async () => (await import("./ops.ts")).auditCommand,
  replay: async () => (await import("./ops.ts")).replayCommand,
  shadow: async () => (await import("./ops.ts")).shadowCommand,
  daemon: async () => (await import("./daemon.ts")).daemonCommand,
};

const HELP = new Set(["--help", "-h"]);

/** Runs the CLI with `args`; returns the process exit code. */
export async function main(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) {
    console.error(overview(VERSION));
    return EXIT.bad;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    console.log(`hookbox ${VERSION}`);
    return EXIT.allow;
  }
  if (name === "help" || HELP.has(name)) {
    const about = rest[0];
    if (about !== undefined && !isCommand(about)) return unknownCommand(about);
    console.log(about === undefined ? overview(VERSION) : helpText(about));
    return EXIT.allow;
  }
  if (!isCommand(name)) return unknownCommand(name);
  // Before anything reads stdin or loads a command: `hookbox validate --help` is not a folder.
  if (rest.some((a) => HELP.has(a))) {
    console.log(helpText(name));
    return EXIT.allow;
  }
  // The remote form of dispatch loads one small module, not the engine.
  const remote = rest.some((a) => a === "--remote" || a.startsWith("--remote=")) ||
    (rest.includes("--agent") && !!Deno.env.get("HOOKBOX_REMOTE"));
  if (name === "dispatch" && remote) {
    try {
      return await (await import("./remote.ts")).remoteDispatchCommand(rest);
    } catch (err) {
      console.error(errorLine(err));
      return EXIT.bad;
    }
  }
  // An agent's call through the user's daemon (started on first use): the answer it gives.
  const asked = Deno.env.get("HOOKBOX_DAEMON");
  const daemon = rest.includes("--agent") && asked !== "0" &&
    (rest.includes("--daemon") || asked === "1");
  if (name === "dispatch" && daemon && !Deno.stdin.isTerminal()) {
    const input = await stdinOnce().catch(() => null);
    if (input !== null) {
      const answer = await (await import("./daemon_client.ts")).viaDaemon(rest, input);
      if (answer !== null) {
        if (answer.stdout) console.log(answer.stdout);
        if (answer.stderr) console.error(answer.stderr);
        return answer.exit;
      }
    }
  }
  if (name === "dispatch" && !Deno.stdin.isTerminal()) {
    // The input names the kind of event, and with it the prepared plugins the
    // last run of that kind loaded: they compile on background threads while
    // dispatch's own code loads. The command reads the same input (and reports
    // its errors). Not from a terminal: a bad flag is reported before typing.
    const input = await stdinOnce().catch(() => "");
    prefetchPrepared(defaultCacheDir(), eventContext(rest, input));
  }
  const load = LOADERS[name];
  try {
    // Dispatch loads zod and RE2 when it needs them (the bundled CLI loads them
    // on demand, see schema/_zod.ts); every other command has them from the start.
    const [command] = await Promise.all([
      load(),
      ...(name === "dispatch" ? [] : [loadZod(), loadRe2()]),
    ]);
    const code = await command(rest);
    // A one-shot call's builds still under way (its event's deadline passed) end with it: they
    // go on in the background for a later call.
    if (name === "dispatch") await (await import("../compile/mod.ts")).handOverUnfinished();
    return code;
  } catch (err) {
    console.error(errorLine(err));
    return EXIT.bad;
  }
}

/** One line naming the unknown command and the nearest known one, then the overview. */
function unknownCommand(name: string): number {
  const near = nearest(name, Object.keys(COMMANDS));
  const hint = near === undefined ? "" : `; did you mean "${near}"?`;
  console.error(`hookbox: unknown command "${name}"${hint}\n\n${overview(VERSION)}`);
  return EXIT.bad;
}

if (import.meta.main) {
  // A hook call exits once it has answered: its deadlines need no timer that can be cleared.
  if (Deno.args[0] === "dispatch") useTimer(signalTimer);
  Deno.exit(await main(Deno.args));
}
