/**
 * Cache and index files written whole or not at all: through a temporary
 * name beside the target, then renamed over it, so a reader (another
 * process, say) never sees half a file. A failed write removes its
 * temporary file.
 *
 * @module
 */

/** Options of {@linkcode writeAtomic}. */
export interface AtomicWriteOptions {
  /** Create the target's folder (and its parents) first. @default false */
  parents?: boolean;
}

/** The folder `path` is in (`.` for a bare name). */
export function parentOf(path: string): string {
  return path.slice(0, Math.max(path.lastIndexOf("/"), 0)) || ".";
}

/** Writes `data` to `path` through a temporary name. */
export async function writeAtomic(
  path: string,
  data: Uint8Array | string,
  options: AtomicWriteOptions = {},
): Promise<void> {
  if (options.parents) await Deno.mkdir(parentOf(path), { recursive: true });
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    if (typeof data === "string") await Deno.writeTextFile(tmp, data);
    else await Deno.writeFile(tmp, data);
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/** {@linkcode writeAtomic}, synchronously. */
export function writeAtomicSync(
  path: string,
  data: string,
  options: AtomicWriteOptions = {},
): void {
  if (options.parents) Deno.mkdirSync(parentOf(path), { recursive: true });
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    Deno.writeTextFileSync(tmp, data);
    Deno.renameSync(tmp, path);
  } catch (err) {
    try {
      Deno.removeSync(tmp);
    } catch { /* never written */ }
    throw err;
  }
}
