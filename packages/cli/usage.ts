/**
 * Every command's usage line, in a module of its own so `packages/cli/main.ts` can
 * print help without loading any command.
 *
 * @module
 */
/** `hookbox bundle`. */
export const BUNDLE_USAGE =
  "hookbox bundle --out DIR [--db URL] [--tenant ID]... [--port 8787] [--compatibility-date DATE] [--audit-url URL]";

/** `hookbox compile`. */
export const COMPILE_USAGE = "hookbox compile HOOK_DIR... [--out DIR] [--cache-dir DIR]";

/** `hookbox dispatch`. */
export const DISPATCH_USAGE =
  "hookbox dispatch [--agent NAME [--remote URL]] [--event TYPE] [--work-dir DIR] [--allow-subprocess] [--hooks-dir DIR]... [--tenant ID] [--strict]";

/** `hookbox install`. */
export const INSTALL_USAGE =
  "hookbox install|uninstall --agent NAME [--project DIR | --user] [--http URL] [--command CMD] [--hooks-dir DIR]... [--force]";

/** `hookbox doctor`. */
export const DOCTOR_USAGE = "hookbox doctor --agent NAME [--project DIR | --user]";

/** `hookbox list`. */
export const LIST_USAGE = "hookbox list [--work-dir DIR] [--hooks-dir DIR]... [--json]";

/** `hookbox serve`. */
export const SERVE_USAGE =
  "hookbox serve [--port 8787] [--hostname 127.0.0.1] [--db URL] [--workers N] [--shutdown-grace SECONDS] [--warm-up EVENTS]";

/** `hookbox validate`. */
export const VALIDATE_USAGE = "hookbox validate [DIR...]";
