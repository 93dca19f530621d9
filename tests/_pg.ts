/**
 * A real PostgreSQL for tests. `HOOKBOX_TEST_PG` (a URL) names one that is
 * already running; otherwise the first call starts a throwaway cluster from
 * Debian's `postgresql` package (initdb + pg_ctl, as the `postgres` user when
 * the tests run as root) on 127.0.0.1 and a free port, and stops it when the
 * process exits. Every call gives a fresh, empty database.
 */
import postgres from "postgres";

let cluster: Promise<string> | null = null;

/** A URL of a new empty database on the test cluster. */
export async function freshDatabase(): Promise<string> {
  const base = await (cluster ??= startCluster());
  const name = `t_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function startCluster(): Promise<string> {
  const given = Deno.env.get("HOOKBOX_TEST_PG");
  if (given) return given;
  const own = await ownCluster();
  globalThis.addEventListener("unload", () => own.stopSync());
  return own.url;
}

/** A PostgreSQL cluster of one test's own (which it may restart without disturbing others). */
export interface OwnCluster {
  /** The `postgres` database's URL. */
  url: string;
  /** Restarts the server (fast shutdown: every connection is dropped), same port. */
  restart(): Promise<void>;
  /** Stops it at once and removes its files. */
  stopSync(): void;
}

/** Starts a throwaway cluster on 127.0.0.1 and a free port (see the module doc). */
export async function ownCluster(): Promise<OwnCluster> {
  const bin = await findBin();
  const dir = await Deno.makeTempDir({ prefix: "hookbox-pg-" });
  const root = Deno.uid() === 0;
  if (root) await run(["chown", "postgres:postgres", dir]);
  const as = (args: string[]) => root ? ["runuser", "-u", "postgres", "--", ...args] : args;
  await run(
    as([`${bin}/initdb`, "-D", `${dir}/data`, "-U", "postgres", "--auth=trust", "-E", "UTF8"]),
  );
  const port = freePort();
  const ctl = (...args: string[]) =>
    as([
      `${bin}/pg_ctl`,
      "-D",
      `${dir}/data`,
      "-l",
      `${dir}/log`,
      "-w",
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
      ...args,
    ]);
  await run(ctl("start"));
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: () => run(ctl("-m", "fast", "restart")),
    stopSync() {
      const stop = as([`${bin}/pg_ctl`, "-D", `${dir}/data`, "-m", "immediate", "stop"]);
      new Deno.Command(stop[0]!, { args: stop.slice(1), stdout: "null", stderr: "null" })
        .outputSync();
      Deno.removeSync(dir, { recursive: true });
    },
  };
}

async function findBin(): Promise<string> {
  try {
    for await (const entry of Deno.readDir("/usr/lib/postgresql")) {
      const bin = `/usr/lib/postgresql/${entry.name}/bin`;
      if ((await Deno.stat(`${bin}/initdb`).catch(() => null))?.isFile) return bin;
    }
  } catch { /* reported below */ }
  throw new Error(
    "PostgreSQL is not installed: apt-get install postgresql, or set HOOKBOX_TEST_PG to a server URL",
  );
}

async function run(cmd: string[]): Promise<void> {
  const out = await new Deno.Command(cmd[0]!, {
    args: cmd.slice(1),
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    throw new Error(`${cmd.join(" ")} failed: ${text}`);
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}
