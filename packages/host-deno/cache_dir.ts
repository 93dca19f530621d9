/**
 * Where hookbox caches compiled and prepared plugins on this machine.
 *
 * @module
 */

/** `$HOOKBOX_CACHE_DIR`, else `$XDG_CACHE_HOME/hookbox`, else `~/.cache/hookbox`. */
export function defaultCacheDir(): string {
  const explicit = Deno.env.get("HOOKBOX_CACHE_DIR");
  if (explicit) return explicit;
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  if (xdg) return `${xdg}/hookbox`;
  const home = Deno.env.get("HOME");
  return home ? `${home}/.cache/hookbox` : "/tmp/hookbox-cache";
}
