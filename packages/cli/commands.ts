/**
 * Every command's options, in one table: each command parses its arguments
 * with its entry here (`parseArgs` takes the `type`, `multiple` and `default`
 * of each option; `help`, `value` and `env` are for people), and `--help`,
 * the usage lines and docs/cli.md's list come from the same entries. A module
 * of its own, so `main.ts` can print help without loading any command.
 *
 * @module
 */

/** One option of a command. */
export interface OptionSpec {
  /** `string` takes a value; `boolean` is a flag. */
  type: "string" | "boolean";
  /** May be given more than once (a list). */
  multiple?: boolean;
  /** Its value when not given. */
  default?: string | boolean | string[];
  /** What its value is called in help (`DIR`, `URL`). */
  value?: string;
  /** What it does, one line. */
  help: string;
}

/** One command. */
export interface CommandSpec {
  /** What it does, one line. */
  summary: string;
  /** Its positional arguments in the usage line (`HOOK_DIR...`), if any. */
  positionals?: string;
  /** Its options by name (without `--`). */
  options: Readonly<Record<string, OptionSpec>>;
  /** Environment variables it reads, with what each does. */
  env?: Readonly<Record<string, string>>;
  /** Runs only from source (not in the bundled CLI). */
  sourceOnly?: boolean;
}

const HOOKS_DIR = {
  type: "string",
  multiple: true,
  default: [] as string[],
  value: "DIR",
  help: "a hooks folder to read at platform level",
} as const;
const AGENT = {
  type: "string",
  value: "NAME",
  help: "claude-code, gemini-cli, codex, copilot, cursor, windsurf or agenthooks",
} as const;
/** What every command that talks to a running service takes. */
const OPS = {
  url: { type: "string", value: "URL", help: "the service (default $HOOKBOX_URL, else :8787)" },
  key: { type: "string", value: "KEY", help: "the key (default from the environment)" },
} as const;
const OPS_ENV = {
  HOOKBOX_URL: "the service's URL",
  HOOKBOX_KEY: "a tenant's key",
  HOOKBOX_ADMIN_KEY: "the admin key",
  HOOKBOX_TIMEOUT_MS: "how long a request and its answer may take, ms (default 300000)",
} as const;
const CACHE = "where compiled plugins and caches live (default $XDG_CACHE_HOME/hookbox)";
const CACHE_MAX = "the most the cache keeps, MiB (default 1024): least recently used go first";

/** The commands, in the order `hookbox --help` lists them. */
export const COMMANDS = {
  dispatch: {
    summary: "runs one event (stdin) through the hooks; prints the result, exits 0 allow / 2 block",
    options: {
      daemon: {
        type: "boolean",
        default: false,
        help: "with --agent: through the user's hookbox daemon, started on first use (docs/cli.md)",
      },
      agent: { ...AGENT, help: `read and answer in an agent's hook protocol: ${AGENT.help}` },
      event: { type: "string", value: "NAME", help: "the agent's event name (install writes it)" },
      "work-dir": { type: "string", value: "DIR", help: "the project (default: the event's)" },
      "allow-subprocess": {
        type: "boolean",
        default: false,
        help: "let subprocess hooks run (default: they are skipped)",
      },
      "hooks-dir": HOOKS_DIR,
      tenant: { type: "string", value: "ID", help: "the tenant id the hooks run under" },
      strict: {
        type: "boolean",
        default: false,
        help: "any failed hook blocks (also $HOOKBOX_STRICT=1)",
      },
      remote: {
        type: "string",
        value: "URL",
        help: "ask a running hookbox serve instead (with --agent; key in $HOOKBOX_KEY)",
      },
      "timeout-ms": {
        type: "string",
        value: "MS",
        help: "with --remote: how long to wait (default 20000, past the service's 15 s for hooks)",
      },
    },
    env: {
      HOOKBOX_STRICT: "1: any failed hook blocks",
      HOOKBOX_REMOTE: "a hookbox serve URL: dispatch --agent asks it (as --remote)",
      HOOKBOX_KEY: "the tenant key for --remote",
      HOOKBOX_CACHE_DIR: CACHE,
      HOOKBOX_CACHE_MAX_MB: CACHE_MAX,
      HOOKBOX_LOADED_PLUGIN_MB:
        "the most plugin bytes one call loads, MiB (default 256); the hooks past it end as limit",
      HOOKBOX_BUILD_MS: "building time of a call, ms, refilled as much a minute (default " +
        "12000; 0 to 600000); a build past it goes on in the background for a later call",
      HOOKBOX_DAEMON: "1: as --daemon; 0: never through the daemon, even with --daemon",
      HOOKBOX_DAEMON_WAIT_MS:
        "how long a call waits for the daemon (default 18000); late, it runs in its own process",
      XDG_RUNTIME_DIR: "the daemon's socket is in $XDG_RUNTIME_DIR/hookbox (else /tmp/hookbox-UID)",
    },
  },
  daemon: {
    summary:
      "the user's daemon for dispatch --agent --daemon in this environment (HOME, PATH, XDG " +
      "folders, HOOKBOX_*: each has its own, up to 4): run it, or ask its status, or stop it",
    positionals: "[run|status|stop]",
    options: {
      idle: {
        type: "string",
        default: "600",
        value: "SECONDS",
        help: "stop after this long without a call",
      },
      calls: {
        type: "string",
        default: "4",
        value: "N",
        help: "answer up to N calls at once; a call that waits over 250 ms runs in its own process",
      },
    },
    env: {
      XDG_RUNTIME_DIR:
        "the socket is in $XDG_RUNTIME_DIR/hookbox (else /tmp/hookbox-UID), mode 700",
      HOOKBOX_BUILD_MS: "building time of each project's calls, ms (as for dispatch)",
    },
  },
  validate: {
    summary: "checks hook folders (HOOK.md, entry, plugin) and prints every problem",
    positionals: "[DIR...]",
    options: {},
  },
  test: {
    summary: "runs each hook's tests/*.json through the sandbox and says what differed",
    positionals: "[HOOK_DIR...]",
    options: {
      json: { type: "boolean", default: false, help: "print every case's result as JSON" },
      "allow-subprocess": {
        type: "boolean",
        default: false,
        help: "let a subprocess hook run (default: it is skipped)",
      },
      "cache-dir": { type: "string", value: "DIR", help: CACHE },
    },
    env: { HOOKBOX_CACHE_DIR: CACHE, HOOKBOX_CACHE_MAX_MB: CACHE_MAX },
  },
  init: {
    summary: "writes a new hook folder with a test that hookbox test passes",
    positionals: "NAME",
    options: {
      lang: {
        type: "string",
        default: "js",
        value: "LANG",
        help: "js, ts, as (AssemblyScript), c or rust (these two with a build.sh)",
      },
      dir: { type: "string", default: ".", value: "DIR", help: "where the hook folder goes" },
    },
  },
  list: {
    summary: "the hooks that would apply, in dispatch order, per event",
    options: {
      "work-dir": { type: "string", value: "DIR", help: "the project (default: .)" },
      "hooks-dir": HOOKS_DIR,
      json: { type: "boolean", default: false, help: "print JSON" },
    },
  },
  compile: {
    summary: "builds each hook's plugin into DIR/NAME.wasm and prints its SHA-256",
    positionals: "HOOK_DIR...",
    options: {
      out: { type: "string", default: ".", value: "DIR", help: "where plugins are written" },
      "cache-dir": { type: "string", value: "DIR", help: CACHE },
    },
    env: { HOOKBOX_CACHE_DIR: CACHE, HOOKBOX_CACHE_MAX_MB: CACHE_MAX },
  },
  serve: {
    summary: "the multi-tenant HTTP service (docs/service.md)",
    sourceOnly: true,
    options: {
      port: { type: "string", default: "8787", value: "PORT", help: "the port to listen on" },
      hostname: {
        type: "string",
        default: "127.0.0.1",
        value: "HOST",
        help: "the address to listen on",
      },
      db: {
        type: "string",
        value: "URL",
        help: "sqlite:PATH or postgres://… (default $XDG_DATA_HOME/hookbox/hookbox.db)",
      },
      workers: {
        type: "string",
        value: "N",
        help: "plugin worker threads per process (default: cores ÷ processes)",
      },
      processes: {
        type: "string",
        value: "N",
        help: "server processes sharing the port and the store (default 1; Linux)",
      },
      "shutdown-grace": {
        type: "string",
        value: "SECONDS",
        help: "longest wait for requests in flight on SIGTERM (default 10)",
      },
      "warm-up": {
        type: "string",
        value: "EVENTS",
        help: "synthetic events run before the port opens (default 2000; 0 starts cold)",
      },
      "held-mb": {
        type: "string",
        value: "MIB",
        help: "what one tenant's requests may hold, bodies and unread answers (default 64)",
      },
      "server-held-mb": {
        type: "string",
        value: "MIB",
        help: "what all tenants' requests may hold before shares apply (default 1024)",
      },
      "admin-key-file": {
        type: "string",
        value: "PATH",
        help: "a file holding the admin key (made, mode 0600, when missing)",
      },
      config: {
        type: "string",
        value: "FILE",
        help: "a JSON file of these options by name (flags and HOOKBOX_* win over it)",
      },
      "decision-log": {
        type: "string",
        value: "FILE",
        help: "append each decision as a JSON line (hooks' codes, details, stderr)",
      },
      "decision-log-events": {
        type: "boolean",
        default: false,
        help: "with --decision-log: put each event in its line",
      },
    },
    env: {
      HOOKBOX_ADMIN_KEY: "the admin key",
      HOOKBOX_ADMIN_KEY_FILE: "as --admin-key-file",
      HOOKBOX_DECISION_LOG_TOKEN: "sent as a bearer token to a --decision-log URL",
      "HOOKBOX_PORT, HOOKBOX_HOSTNAME, HOOKBOX_DB, HOOKBOX_WORKERS, HOOKBOX_SHUTDOWN_GRACE, HOOKBOX_WARM_UP, HOOKBOX_DECISION_LOG, HOOKBOX_PROCESSES":
        "as the flags of the same name",
      HOOKBOX_CONFIG: "as --config",
      HOOKBOX_WASM_TIERING_BUDGET: "V8's WebAssembly tier-up budget (0 leaves V8's)",
    },
  },
  bundle: {
    summary: "writes an edge Worker (workerd, Cloudflare) from the service's store",
    sourceOnly: true,
    options: {
      out: { type: "string", value: "DIR", help: "where the Worker is written (required)" },
      db: {
        type: "string",
        value: "URL",
        help: "the service's store (sqlite:PATH or postgres://…)",
      },
      tenant: { type: "string", multiple: true, value: "ID", help: "bundle only these tenants" },
      port: { type: "string", default: "8787", value: "PORT", help: "the port in config.capnp" },
      "compatibility-date": { type: "string", value: "DATE", help: "the Worker's date" },
      "audit-url": {
        type: "string",
        value: "URL",
        help: "post audit items to this /v1/audit/ingest",
      },
    },
  },
  install: {
    summary: "registers hookbox in an agent's own hook configuration",
    options: {
      agent: AGENT,
      project: { type: "string", value: "DIR", help: "the project whose config is written" },
      user: { type: "boolean", default: false, help: "write the user's config instead" },
      http: { type: "string", value: "URL", help: "register HTTP hooks of this hookbox serve" },
      command: { type: "string", value: "CMD", help: "the hookbox command (default: hookbox)" },
      "hooks-dir": HOOKS_DIR,
      daemon: {
        type: "boolean",
        default: false,
        help:
          "the command calls through the user's hookbox daemon (dispatch --daemon; the default)",
      },
      "no-daemon": {
        type: "boolean",
        default: false,
        help: "the command answers each call in its own process, never through the daemon",
      },
      force: { type: "boolean", default: false, help: "write a config the agent would ignore" },
    },
  },
  uninstall: {
    summary: "removes what install wrote",
    options: {
      agent: AGENT,
      project: { type: "string", value: "DIR", help: "the project whose config is changed" },
      user: { type: "boolean", default: false, help: "change the user's config instead" },
      http: { type: "string", value: "URL", help: "(as install)" },
      command: { type: "string", value: "CMD", help: "(as install)" },
      "hooks-dir": HOOKS_DIR,
      daemon: { type: "boolean", default: false, help: "(as install)" },
      "no-daemon": { type: "boolean", default: false, help: "(as install)" },
      force: { type: "boolean", default: false, help: "change a config the agent would ignore" },
    },
  },
  doctor: {
    summary: "sends every installed event through the installed command and says what came back",
    options: {
      agent: AGENT,
      project: { type: "string", value: "DIR", help: "the project to check" },
      user: { type: "boolean", default: false, help: "check the user's config instead" },
    },
    env: { HOOKBOX_KEY: "the tenant key for HTTP hooks" },
  },
  tenants: {
    summary: "the service's tenants (admin): list, show ID, create ID, delete ID, policy ID",
    positionals: "list|show|create|delete|policy [ID]",
    options: {
      ...OPS,
      set: {
        type: "string",
        multiple: true,
        default: [] as string[],
        value: "KEY=VALUE",
        help: "with policy: set a field (PATCH; numbers stay numbers, {…} and […] are JSON)",
      },
      unset: {
        type: "string",
        multiple: true,
        default: [] as string[],
        value: "KEY",
        help: "with policy: remove a field",
      },
    },
    env: OPS_ENV,
  },
  keys: {
    summary: "a tenant's keys (admin): list TENANT, create TENANT, revoke TENANT KEY_ID",
    positionals: "list|create|revoke TENANT [KEY_ID]",
    options: { ...OPS, name: { type: "string", value: "NAME", help: "with create: a label" } },
    env: OPS_ENV,
  },
  push: {
    summary: "uploads a hook folder to the service as a new version",
    positionals: "HOOK_DIR",
    options: {
      ...OPS,
      name: { type: "string", value: "NAME", help: "the hook's name (default: HOOK.md's)" },
      platform: { type: "boolean", default: false, help: "as a platform hook (admin key)" },
      stage: {
        type: "boolean",
        default: false,
        help: "store it beside the active version, not active (to test, replay or shadow)",
      },
    },
    env: OPS_ENV,
  },
  hooks: {
    summary: "the tenant's hooks on the service: list, show, enable, disable, rollback, delete",
    positionals: "list|show|enable|disable|rollback|delete [NAME] [VERSION]",
    options: { ...OPS },
    env: OPS_ENV,
  },
  replay: {
    summary:
      "runs a version of a hook on the tenant's captured events; prints the answers it would change",
    positionals: "NAME VERSION",
    options: {
      ...OPS,
      since: { type: "string", value: "TIME", help: "only events from this instant (RFC 3339)" },
      limit: { type: "string", default: "50", value: "N", help: "events per request (1-200)" },
      all: {
        type: "boolean",
        default: false,
        help: "go on page after page to the newest captured event",
      },
    },
    env: OPS_ENV,
  },
  shadow: {
    summary:
      "runs a version beside the active one on live events, never applied: start, status, stop",
    positionals: "start NAME VERSION | status NAME | stop NAME",
    options: {
      ...OPS,
      limit: {
        type: "string",
        default: "50",
        value: "N",
        help: "with status: disagreements (1-200)",
      },
    },
    env: OPS_ENV,
  },
  audit: {
    summary: "the audit as JSON lines, oldest first; --follow keeps printing new ones",
    options: {
      ...OPS,
      tenant: { type: "string", value: "ID", help: "a tenant's audit, read with the admin key" },
      "all-tenants": {
        type: "boolean",
        default: false,
        help: "every tenant's audit, read with the admin key (items carry tenant_id)",
      },
      "session-id": { type: "string", value: "ID", help: "only this session" },
      "event-type": { type: "string", value: "TYPE", help: "only this event type" },
      hook: { type: "string", value: "NAME", help: "only events this hook ran in" },
      outcome: { type: "string", value: "OUTCOME", help: "only with a hook of this outcome" },
      decision: { type: "string", value: "allow|block", help: "only this decision" },
      since: { type: "string", value: "TIME", help: "only from this instant (RFC 3339)" },
      limit: { type: "string", default: "50", value: "N", help: "items per read (1-1000)" },
      follow: { type: "boolean", default: false, help: "keep printing new items until Ctrl-C" },
      interval: {
        type: "string",
        default: "1000",
        value: "MS",
        help: "with --follow: how often to look",
      },
    },
    env: OPS_ENV,
  },
} as const satisfies Record<string, CommandSpec>;

/** A command's name. */
export type CommandName = keyof typeof COMMANDS;

/** True when `name` is a command. */
export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** `hookbox NAME [--opt VALUE]... [POSITIONALS]`. */
export function usageLine(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  const opts = Object.entries(spec.options).map(([flag, o]) => {
    const one = o.type === "string" ? `--${flag} ${o.value ?? "VALUE"}` : `--${flag}`;
    return `[${one}]${o.multiple ? "..." : ""}`;
  });
  return ["hookbox", name, ...opts, ...(spec.positionals ? [spec.positionals] : [])].join(" ");
}

/** `hookbox NAME --help`: usage, what it does, each option and environment variable. */
export function helpText(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  const lines = [`usage: hookbox ${name}${spec.positionals ? ` ${spec.positionals}` : ""}`];
  if (Object.keys(spec.options).length > 0) lines[0] += " [options]";
  lines.push("", spec.summary + (spec.sourceOnly ? " (runs from source only)" : ""));
  const options = Object.entries(spec.options).map(([flag, o]) => {
    const left = `--${flag}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : ""}`;
    const def = o.default === undefined || o.type === "boolean" || Array.isArray(o.default)
      ? ""
      : ` (default ${o.default})`;
    return [left, `${o.help}${def}${o.multiple ? "; repeatable" : ""}`] as const;
  });
  options.push(["--help", "print this and exit"]);
  const width = Math.max(...options.map(([left]) => left.length));
  lines.push("", "options:", ...options.map(([l, r]) => `  ${l.padEnd(width)}  ${r}`));
  const env = Object.entries(spec.env ?? {});
  if (env.length > 0) {
    const w = Math.max(...env.map(([k]) => k.length));
    lines.push("", "environment:", ...env.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`));
  }
  return lines.join("\n");
}

/** `hookbox --help`: every command with what it does. */
export function overview(version: string): string {
  const names = Object.keys(COMMANDS) as CommandName[];
  const width = Math.max(...names.map((n) => n.length));
  return [
    `hookbox ${version}: runs AI-agent hooks in WebAssembly sandboxes`,
    "",
    "usage: hookbox COMMAND [options]   (hookbox COMMAND --help for its options)",
    "",
    "commands:",
    ...names.map((n) => `  ${n.padEnd(width)}  ${COMMANDS[n].summary}`),
    "",
    "  --version         print the version and exit",
    "",
    "docs: docs/cli.md",
  ].join("\n");
}

/**
 * A command's options as given by its other sources, for the options not on
 * the command line: `HOOKBOX_<NAME>` from the environment (`--shutdown-grace`
 * is `HOOKBOX_SHUTDOWN_GRACE`), then `config` (a JSON object by option name),
 * then the table's default. A config value of the wrong type is an error
 * naming it.
 */
export function withOtherSources(
  name: CommandName,
  given: Record<string, unknown>,
  config: Record<string, unknown> = {},
  env: (key: string) => string | undefined = (key) => Deno.env.get(key),
): Record<string, unknown> {
  const spec: CommandSpec = COMMANDS[name];
  const out: Record<string, unknown> = {};
  for (const [option, o] of Object.entries(spec.options)) {
    const fromEnv = env(`HOOKBOX_${option.toUpperCase().replaceAll("-", "_")}`);
    let value = given[option] ?? (fromEnv === undefined || fromEnv === "" ? undefined : fromEnv) ??
      config[option];
    if (value !== undefined && value === config[option] && given[option] === undefined) {
      const ok = o.type === "boolean"
        ? typeof value === "boolean"
        : ["string", "number"].includes(typeof value);
      if (!ok) {
        throw new TypeError(
          `config: "${option}" must be a ${o.type === "boolean" ? "boolean" : "string or number"}`,
        );
      }
      if (typeof value === "number") value = String(value);
    }
    out[option] = value ?? o.default;
  }
  const unknown = Object.keys(config).filter((key) => !Object.hasOwn(spec.options, key));
  if (unknown.length > 0) {
    throw new TypeError(
      `config: unknown option${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}`,
    );
  }
  return out;
}

/** The `parseArgs` options of a command without their defaults (see {@linkcode withOtherSources}). */
export function parseOptionsGiven(name: CommandName): Record<string, Omit<OptionSpec, "default">> {
  const spec: CommandSpec = COMMANDS[name];
  return Object.fromEntries(
    Object.entries(spec.options).map(([option, { default: _, ...rest }]) => [option, rest]),
  );
}

/** The `parseArgs` options of a command (what `node:util` reads of the table). */
export function parseOptions<N extends CommandName>(name: N): (typeof COMMANDS)[N]["options"] {
  return COMMANDS[name].options;
}
