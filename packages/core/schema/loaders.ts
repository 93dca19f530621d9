/**
 * The on-demand loaders of zod and RE2, for callers outside the core (the CLI
 * loads them ahead of a command that needs them; an edge Worker's service
 * reads an event again once zod is loaded). The bundled CLI and the Worker
 * swap the modules behind them (`_zod.ts`, `_re2.ts`) for versions that load
 * on first use.
 *
 * @module
 */
export { loadRe2 } from "./_re2.ts";
export { loadZod, zod, zodLoaded } from "./_zod.ts";
