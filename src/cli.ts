/**
 * The hookbox command line: `dispatch`, `validate`, `list`, `compile`, `serve`,
 * `bundle`, `install`, `uninstall`.
 * Run with `deno run -A src/cli.ts` (or `deno task hookbox`).
 *
 * @module
 */
import { errorLine, EXIT } from "./cli/_io.ts";
import { COMPILE_USAGE, compileCommand } from "./cli/compile.ts";
import { DISPATCH_USAGE, dispatchCommand } from "./cli/dispatch.ts";
import { LIST_USAGE, listCommand } from "./cli/list.ts";
import { SERVE_USAGE, serveCommand } from "./cli/serve.ts";
import { BUNDLE_USAGE, bundleCommand } from "./cli/bundle.ts";
import { INSTALL_USAGE, installCommand, uninstallCommand } from "./cli/install.ts";
import { VALIDATE_USAGE, validateCommand } from "./cli/validate.ts";

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  dispatch: dispatchCommand,
  validate: validateCommand,
  list: listCommand,
  compile: compileCommand,
  serve: serveCommand,
  bundle: bundleCommand,
  install: installCommand,
  uninstall: uninstallCommand,
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
  const command = COMMANDS[name];
  if (!command) {
    console.error(`hookbox: unknown command "${name}"\n${USAGE}`);
    return EXIT.bad;
  }
  try {
    return await command(rest);
  } catch (err) {
    console.error(errorLine(err));
    return EXIT.bad;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
