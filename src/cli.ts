/**
 * The hookbox command line: `dispatch`, `validate`, `list`, `compile`, `serve`,
 * `bundle`, `install`, `uninstall`.
 * Run with `deno run -A src/cli.ts` (or `deno task hookbox`).
 *
 * Commands are imported when they run: an agent spawns `hookbox dispatch`
 * once per event, so it must not pay for loading the server, the bundler or
 * the compilers.
 *
 * @module
 */
import { errorLine, EXIT } from "./cli/_io.ts";
import {
  BUNDLE_USAGE,
  COMPILE_USAGE,
  DISPATCH_USAGE,
  INSTALL_USAGE,
  LIST_USAGE,
  SERVE_USAGE,
  VALIDATE_USAGE,
} from "./cli/usage.ts";

type Command = (args: string[]) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  dispatch: async () => (await import("./cli/dispatch.ts")).dispatchCommand,
  validate: async () => (await import("./cli/validate.ts")).validateCommand,
  list: async () => (await import("./cli/list.ts")).listCommand,
  compile: async () => (await import("./cli/compile.ts")).compileCommand,
  serve: async () => (await import("./cli/serve.ts")).serveCommand,
  bundle: async () => (await import("./cli/bundle.ts")).bundleCommand,
  install: async () => (await import("./cli/install.ts")).installCommand,
  uninstall: async () => (await import("./cli/install.ts")).uninstallCommand,
};

const USAGE = `usage:
  ${DISPATCH_USAGE}
  ${VALIDATE_USAGE}
  ${LIST_USAGE}
  ${COMPILE_USAGE}
  ${SERVE_USAGE}
  ${BUNDLE_USAGE}
  ${INSTALL_USAGE}`;

/** Runs the CLI with `args`; returns the process exit code. */
export async function main(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    console.log(USAGE);
    return name === undefined ? EXIT.bad : EXIT.allow;
  }
  const load = COMMANDS[name];
  if (!load) {
    console.error(`hookbox: unknown command "${name}"\n${USAGE}`);
    return EXIT.bad;
  }
  try {
    return await (await load())(rest);
  } catch (err) {
    console.error(errorLine(err));
    return EXIT.bad;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
