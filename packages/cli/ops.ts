/**
 * Operating a running `hookbox serve` from the command line, over its API:
 * `tenants`, `keys`, `push`, `hooks`, `audit [--follow]`, `replay` and
 * `shadow` (docs/replay.md). The service is
 * `--url` (else `$HOOKBOX_URL`, else http://127.0.0.1:8787); the key is
 * `--key`, else `$HOOKBOX_ADMIN_KEY` for the admin's commands and
 * `$HOOKBOX_KEY` for a tenant's. Answers are printed as JSON; an error answer
 * is one line with its code, and exit 1.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { bytesBase64 } from "../core/bytes.ts";
import { EXIT, readAllCapped, UsageError } from "./_io.ts";
import { parseOptions, usageLine } from "./commands.ts";

/** Most bytes `push` sends (the service's upload cap). */
const MAX_PUSH_BYTES = 16 * 1024 * 1024;

/**
 * Time a request gets, answer included, unless `$HOOKBOX_TIMEOUT_MS` says
 * otherwise: past the service's longest work for one request (an upload's
 * compile, 120 s, after waiting for a build slot).
 */
export const OPS_TIMEOUT_MS = 300_000;

/** Largest answer read from the service. */
export const MAX_OPS_ANSWER_BYTES = 256 * 1024 * 1024;

/** `$HOOKBOX_TIMEOUT_MS`, checked, or {@linkcode OPS_TIMEOUT_MS}. */
function timeoutMs(): number {
  const text = Deno.env.get("HOOKBOX_TIMEOUT_MS");
  if (text === undefined || text === "") return OPS_TIMEOUT_MS;
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 1 || ms > 86_400_000) {
    throw new UsageError(
      `$HOOKBOX_TIMEOUT_MS must be an integer from 1 to 86400000, got "${text}"`,
    );
  }
  return ms;
}

type Who = "admin" | "tenant";

interface Client {
  call(method: string, path: string, body?: unknown): Promise<unknown>;
}

function client(url: string | undefined, key: string | undefined, who: Who): Client {
  const base = url ?? Deno.env.get("HOOKBOX_URL") ?? "http://127.0.0.1:8787";
  const auth = key ?? Deno.env.get(who === "admin" ? "HOOKBOX_ADMIN_KEY" : "HOOKBOX_KEY");
  if (!auth) {
    const env = who === "admin" ? "HOOKBOX_ADMIN_KEY" : "HOOKBOX_KEY";
    throw new UsageError(`this needs the ${who} key: --key KEY or $${env}`);
  }
  const ms = timeoutMs();
  return {
    async call(method, path, body) {
      // One deadline for the request and its answer: a server that stops or trickles ends here.
      const signal = AbortSignal.timeout(ms);
      const late = () =>
        new UsageError(`${method} ${path}: no answer from ${base} within ${ms} ms`);
      let res: Response;
      try {
        res = await fetch(new URL(path, base), {
          method,
          headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal,
        });
      } catch (err) {
        if (signal.aborted) throw late();
        throw new UsageError(`cannot reach ${base}: ${(err as Error).message}`);
      }
      let text = "";
      try {
        const bytes = res.body === null ? new Uint8Array() : await readAllCapped(
          res.body,
          MAX_OPS_ANSWER_BYTES,
          () =>
            new UsageError(
              `${method} ${path}: the answer from ${base} is over ${MAX_OPS_ANSWER_BYTES} bytes`,
            ),
        );
        text = new TextDecoder().decode(bytes);
      } catch (err) {
        if (err instanceof UsageError) throw err;
        if (signal.aborted) throw late();
        throw new UsageError(
          `${method} ${path}: the answer was not read: ${(err as Error).message}`,
        );
      }
      // A proxy in between may answer HTML: shown as text, never a crash of the client.
      // deno-lint-ignore no-explicit-any -- an answer is read field by field
      let answer: any = null;
      try {
        answer = text ? JSON.parse(text) : null;
      } catch {
        if (res.ok) {
          throw new UsageError(`${method} ${path}: the answer is not JSON: ${text.slice(0, 200)}`);
        }
      }
      if (!res.ok) {
        const error = answer?.error ?? {};
        const problems = (error.problems ?? []).map((p: { code: string; message: string }) =>
          `\n  ${p.code}: ${p.message}`
        ).join("");
        throw new UsageError(
          `${method} ${path}: ${res.status} ${error.code ?? ""}: ${
            error.message ?? text
          }${problems}`,
        );
      }
      return answer;
    },
  };
}

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

/** `hookbox tenants list|show ID|create ID|delete ID|policy ID [--set K=V]... [--unset K]...`. */
export async function tenantsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("tenants"),
    allowPositionals: true,
    strict: true,
  });
  const api = client(values.url, values.key, "admin");
  const [sub, id] = positionals;
  const need = () => id ?? usage("tenants");
  switch (sub) {
    case "list":
      print(await api.call("GET", "/v1/tenants"));
      break;
    case "show":
      print(await api.call("GET", `/v1/tenants/${encodeURIComponent(need())}`));
      break;
    case "create":
      print(await api.call("POST", "/v1/tenants", { id: need() }));
      break;
    case "delete":
      await api.call("DELETE", `/v1/tenants/${encodeURIComponent(need())}`);
      console.error(`deleted tenant ${id}`);
      break;
    case "policy": {
      const patch: Record<string, unknown> = {};
      for (const pair of values.set) {
        const at = pair.indexOf("=");
        if (at <= 0) throw new UsageError(`--set takes KEY=VALUE, got ${pair}`);
        const raw = pair.slice(at + 1);
        patch[pair.slice(0, at)] = /^-?\d+(\.\d+)?(e\d+)?$/.test(raw)
          ? Number(raw)
          : /^[[{]/.test(raw)
          ? jsonValue(pair.slice(0, at), raw)
          : raw;
      }
      for (const key of values.unset) patch[key] = null;
      const path = `/v1/tenants/${encodeURIComponent(need())}/policy`;
      print(
        Object.keys(patch).length === 0
          ? (await api.call("GET", `/v1/tenants/${encodeURIComponent(id!)}`) as { policy: unknown })
            .policy
          : await api.call("PATCH", path, patch),
      );
      break;
    }
    default:
      usage("tenants");
  }
  return EXIT.allow;
}

/** `hookbox keys list TENANT|create TENANT [--name N]|revoke TENANT KEY_ID`. */
export async function keysCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("keys"),
    allowPositionals: true,
    strict: true,
  });
  const api = client(values.url, values.key, "admin");
  const [sub, tenant, keyId] = positionals;
  if (tenant === undefined) usage("keys");
  const base = `/v1/tenants/${encodeURIComponent(tenant!)}/keys`;
  if (sub === "list") print(await api.call("GET", base));
  else if (sub === "create") {
    print(await api.call("POST", base, values.name === undefined ? {} : { name: values.name }));
    console.error("the key is shown once: keep it now");
  } else if (sub === "revoke" && keyId !== undefined) {
    await api.call("DELETE", `${base}/${encodeURIComponent(keyId)}`);
    console.error(`revoked ${keyId}`);
  } else usage("keys");
  return EXIT.allow;
}

/**
 * `hookbox push HOOK_DIR [--name NAME] [--platform] [--stage]`: uploads a hook
 * folder as a new version (with `--stage`, stored but not made active).
 */
export async function pushCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("push"),
    allowPositionals: true,
    strict: true,
  });
  const dir = positionals[0];
  if (dir === undefined || positionals.length > 1) usage("push");
  const files = await folderFiles(dir!);
  if (!("HOOK.md" in files)) throw new UsageError(`${dir} has no HOOK.md`);
  const name = values.name ?? /^\s*name:\s*([a-z0-9-]+)\s*$/m.exec(files["HOOK.md"] as string)?.[1];
  if (!name) throw new UsageError(`no name: HOOK.md has none, give --name`);
  const api = client(values.url, values.key, values.platform ? "admin" : "tenant");
  const path = (values.platform ? `/v1/platform/hooks/${name}` : `/v1/hooks/${name}`) +
    (values.stage ? "?stage=1" : "");
  console.error(`pushing ${Object.keys(files).length} files of ${dir} as "${name}" …`);
  print(await api.call("PUT", path, { files }));
  return EXIT.allow;
}

/**
 * The files of `dir` for an upload: text as text, anything else as base64;
 * no .git. A link is never followed (a cloned folder's `key -> ~/.ssh/id_rsa`
 * would send the key): it, and anything that is not a file or a folder, is
 * left out with a line on stderr naming it.
 */
async function folderFiles(dir: string): Promise<Record<string, string | { base64: string }>> {
  const files: Record<string, string | { base64: string }> = {};
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  let total = 0;
  const walk = async (at: string, prefix: string) => {
    for await (const entry of Deno.readDir(at)) {
      if (entry.name === ".git") continue;
      const path = `${at}/${entry.name}`;
      if (entry.isSymlink || (!entry.isDirectory && !entry.isFile)) {
        console.error(
          `hookbox push: not sending ${prefix}${entry.name}: ${
            entry.isSymlink ? "a link (links are never followed)" : "not a file or a folder"
          }`,
        );
      } else if (entry.isDirectory) await walk(path, `${prefix}${entry.name}/`);
      else {
        const bytes = await Deno.readFile(path);
        total += bytes.byteLength;
        if (total > MAX_PUSH_BYTES) {
          throw new UsageError(`${dir} holds over ${MAX_PUSH_BYTES} bytes, the upload cap`);
        }
        try {
          files[`${prefix}${entry.name}`] = utf8.decode(bytes);
        } catch {
          files[`${prefix}${entry.name}`] = { base64: bytesBase64(bytes) };
        }
      }
    }
  };
  try {
    await walk(dir, "");
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) throw new UsageError(`${dir}: no such folder`);
    throw err;
  }
  return files;
}

/** `hookbox hooks list|show NAME|enable NAME|disable NAME|rollback NAME VERSION|delete NAME`. */
export async function hooksCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("hooks"),
    allowPositionals: true,
    strict: true,
  });
  const api = client(values.url, values.key, "tenant");
  const [sub, name, version] = positionals;
  const path = () => `/v1/hooks/${encodeURIComponent(name ?? usage("hooks"))}`;
  switch (sub) {
    case "list":
      print(await api.call("GET", "/v1/hooks"));
      break;
    case "show":
      print(await api.call("GET", path()));
      break;
    case "enable":
    case "disable":
      print(await api.call("PATCH", path(), { enabled: sub === "enable" }));
      break;
    case "rollback": {
      const v = Number(version);
      if (!Number.isInteger(v) || v < 1) usage("hooks");
      print(await api.call("POST", `${path()}/rollback`, { version: v }));
      break;
    }
    case "delete":
      await api.call("DELETE", path());
      console.error(`deleted hook ${name}`);
      break;
    default:
      usage("hooks");
  }
  return EXIT.allow;
}

/**
 * `hookbox audit [--tenant ID | --all-tenants] [filters] [--limit N] [--follow]`: audit items
 * as JSON lines.
 */
export async function auditCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: parseOptions("audit"), strict: true });
  if (values.tenant !== undefined && values["all-tenants"]) {
    throw new UsageError("audit takes --tenant ID or --all-tenants, not both");
  }
  const admin = values.tenant !== undefined || values["all-tenants"];
  const api = client(values.url, values.key, admin ? "admin" : "tenant");
  const base = values["all-tenants"]
    ? "/v1/audit/all"
    : values.tenant !== undefined
    ? `/v1/tenants/${encodeURIComponent(values.tenant)}/audit`
    : "/v1/audit";
  const filters = new URLSearchParams();
  for (
    const name of ["session_id", "event_type", "hook", "outcome", "decision", "since"] as const
  ) {
    const value = values[name.replace("_", "-") as keyof typeof values];
    if (typeof value === "string") filters.set(name, value);
  }
  filters.set("limit", values.limit);
  type Page = { items: { decision_id: string; at: string }[] };
  const read = async (since?: string) => {
    const query = new URLSearchParams(filters);
    if (since !== undefined) query.set("since", since);
    return (await api.call("GET", `${base}?${query}`) as Page).items;
  };
  // Oldest first, one JSON line each. The next read asks for rows from `last` on, so only rows
  // of that instant can come again: the ids kept to skip them are theirs alone (a follow that
  // runs for days keeps a handful, not every id it printed).
  const seen = new Set<string>();
  let last: string | undefined;
  const show = (items: Page["items"]) => {
    for (const item of [...items].reverse()) {
      if (seen.has(item.decision_id)) continue;
      if (item.at !== last) seen.clear();
      seen.add(item.decision_id);
      last = item.at;
      console.log(JSON.stringify(item));
    }
  };
  if (!values.follow) {
    show(await read());
    return EXIT.allow;
  }
  const every = Math.max(200, Number(values.interval) || 1000);
  // Listening before the first read: a stop that comes at any point ends it cleanly.
  let stop = false;
  const quit = () => stop = true;
  Deno.addSignalListener("SIGINT", quit);
  Deno.addSignalListener("SIGTERM", quit);
  try {
    show(await read());
    while (!stop) {
      await new Promise((resolve) => setTimeout(resolve, every));
      if (!stop) show(await read(last));
    }
  } finally {
    Deno.removeSignalListener("SIGINT", quit);
    Deno.removeSignalListener("SIGTERM", quit);
  }
  return EXIT.allow;
}

/**
 * `hookbox replay NAME VERSION [--since T] [--limit N] [--all]`: the captured
 * events whose answer the version changes, one JSON line each, oldest first;
 * a summary line on stderr.
 */
export async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("replay"),
    allowPositionals: true,
    strict: true,
  });
  const [name, version] = positionals;
  if (name === undefined || !/^[1-9]\d*$/.test(version ?? "") || positionals.length > 2) {
    usage("replay");
  }
  const api = client(values.url, values.key, "tenant");
  type Report = {
    capturing: boolean;
    examined: number;
    skipped: number;
    changed: unknown[];
    next_cursor: string | null;
  };
  let cursor: string | null = null;
  let [examined, skipped, changed] = [0, 0, 0];
  let capturing = true;
  do {
    const query = new URLSearchParams({ limit: values.limit });
    if (values.since !== undefined) query.set("since", values.since);
    if (cursor !== null) query.set("cursor", cursor);
    const report = await api.call(
      "POST",
      `/v1/hooks/${encodeURIComponent(name!)}/versions/${version}/replay?${query}`,
    ) as Report;
    for (const item of report.changed) console.log(JSON.stringify(item));
    examined += report.examined;
    skipped += report.skipped;
    changed += report.changed.length;
    capturing = report.capturing;
    cursor = report.next_cursor;
  } while (values.all && cursor !== null);
  console.error(
    `replayed ${examined} captured events: ${changed} answers would change` +
      (skipped > 0 ? `, ${skipped} events no longer valid (redacted) were skipped` : "") +
      (cursor !== null ? "; more remain (--all goes on)" : ""),
  );
  if (!capturing) {
    console.error(
      "the tenant does not capture events now: an admin sets its policy's capture " +
        "(hookbox tenants policy ID --set capture={})",
    );
  }
  return EXIT.allow;
}

/** `hookbox shadow start NAME VERSION | status NAME | stop NAME`. */
export async function shadowCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: parseOptions("shadow"),
    allowPositionals: true,
    strict: true,
  });
  const [sub, name, version] = positionals;
  if (name === undefined) usage("shadow");
  const api = client(values.url, values.key, "tenant");
  const path = `/v1/hooks/${encodeURIComponent(name!)}/shadow`;
  switch (sub) {
    case "start": {
      if (!/^[1-9]\d*$/.test(version ?? "")) usage("shadow");
      print(await api.call("PUT", path, { version: Number(version) }));
      break;
    }
    case "status":
      print(await api.call("GET", `${path}?${new URLSearchParams({ limit: values.limit })}`));
      break;
    case "stop":
      await api.call("DELETE", path);
      console.error(`stopped the shadow of ${name}`);
      break;
    default:
      usage("shadow");
  }
  return EXIT.allow;
}

/** `--set KEY={...}` or `[...]`: the value as JSON, or a usage error naming the key. */
function jsonValue(key: string, raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new UsageError(`--set ${key}: the value is not JSON: ${(err as Error).message}`);
  }
}

function usage(name: "tenants" | "keys" | "push" | "hooks" | "replay" | "shadow"): never {
  throw new UsageError(`usage: ${usageLine(name)}`);
}
