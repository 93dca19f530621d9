/**
 * Prometheus metrics of the service (npm `prom-client`): dispatches,
 * decisions and decision latency per tenant, hook outcomes and limit hits
 * per tenant and hook, HTTP requests by route and status, and the process's
 * own (CPU, memory, event-loop lag, file descriptors).
 *
 * @module
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { DispatchResult } from "../core/dispatch/result.ts";
import type { RuntimeStats } from "../core/runtime/types.ts";
import type { ServiceMetrics } from "./service_metrics.ts";

/** Series kept per metric by `Metrics.#child` before the cache starts again. */
const MAX_CHILDREN = 10_000;
/**
 * Most series one metric has. Tenants name their hooks, and prom-client keeps
 * every series it was asked for: a tenant renaming its hooks would grow the
 * process's memory and every scrape without end. Past it, a new series is
 * counted under `_other` in each label but the last (an outcome, a code).
 */
export const MAX_SERIES = 10_000;
/**
 * Most series one tenant has in a metric labelled by tenant. Past it, that
 * tenant's new series count under `_other` in the labels between the tenant
 * and the last, so one tenant naming hooks without end never pushes another
 * tenant's series into `_other`.
 */
export const MAX_TENANT_SERIES = 1_000;
/** The label value of the series past {@linkcode MAX_SERIES} or {@linkcode MAX_TENANT_SERIES}. */
export const OTHER = "_other";
/** HTTP methods counted by name; any other (a client may send any token) counts as `_other`. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The gauges of what the hook runtime holds ({@linkcode Metrics.watchRuntime}): name, help, field. */
const RUNTIME_GAUGES: readonly [string, string, keyof RuntimeStats][] = [
  ["hookbox_runtime_workers", "Plugin worker threads alive", "workers"],
  ["hookbox_runtime_running_calls", "Plugin workers running a call or chain now", "running"],
  ["hookbox_runtime_queued_calls", "Hook calls waiting for a plugin worker", "queued"],
  ["hookbox_runtime_warm_instances", "Idle warm instances kept for reuse", "warmInstances"],
  [
    "hookbox_runtime_warm_idle_bytes",
    "Bytes the idle warm instances hold (memory and restore snapshots)",
    "warmIdleBytes",
  ],
  ["hookbox_runtime_kept_plugins", "Plugins kept compiled for later calls", "keptPlugins"],
  [
    "hookbox_runtime_kept_plugin_bytes",
    "Bytes the kept plugins were loaded from",
    "keptPluginBytes",
  ],
  [
    "hookbox_runtime_loaded_plugin_bytes",
    "Bytes of every plugin the live workers loaded in their lives, let go or not",
    "loadedPluginBytes",
  ],
  [
    "hookbox_runtime_pooled_memory_bytes",
    "Zeroed memories kept for fresh calls of the kept plugins, bytes",
    "pooledMemoryBytes",
  ],
];

/** The service's metrics, on a registry of their own. */
export class Metrics implements ServiceMetrics {
  readonly registry = new Registry();

  /** With `processMetrics` (the default), the process's CPU, memory, event loop and fds too. */
  constructor({ processMetrics = true }: { processMetrics?: boolean } = {}) {
    if (processMetrics) collectDefaultMetrics({ register: this.registry, prefix: "hookbox_" });
  }
  readonly #dispatches = new Counter({
    name: "hookbox_dispatches_total",
    help: "Events dispatched, by tenant and decision",
    labelNames: ["tenant", "decision", "dry_run"],
    registers: [this.registry],
  });
  readonly #outcomes = new Counter({
    name: "hookbox_hook_outcomes_total",
    help: "Hook calls, by tenant, hook and outcome",
    labelNames: ["tenant", "hook", "outcome"],
    registers: [this.registry],
  });
  readonly #limits = new Counter({
    name: "hookbox_limit_hits_total",
    help: "Hook calls stopped by a limit or timeout, by tenant, hook and failure code",
    labelNames: ["tenant", "hook", "code"],
    registers: [this.registry],
  });
  readonly #requests = new Histogram({
    name: "hookbox_http_request_seconds",
    help: "HTTP requests by method, route (as declared) and status",
    labelNames: ["method", "route", "status"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30],
    registers: [this.registry],
  });
  readonly #latency = new Histogram({
    name: "hookbox_decision_seconds",
    help: "Time from request to committed decision, by tenant",
    labelNames: ["tenant"],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly #rejected = new Counter({
    name: "hookbox_requests_rejected_total",
    help: "Requests answered with an error, by code",
    labelNames: ["code"],
    registers: [this.registry],
  });
  readonly #captures = new Counter({
    name: "hookbox_captures_total",
    help: "Events of capturing tenants, by tenant and whether they were kept or too large",
    labelNames: ["tenant", "result"],
    registers: [this.registry],
  });
  readonly #shadowRuns = new Counter({
    name: "hookbox_shadow_runs_total",
    help: "Live events a shadow version ran on, by tenant, hook and result " +
      "(agreed, disagreed, skipped: a run of that tenant was under way, or its fuel quota was spent)",
    labelNames: ["tenant", "hook", "result"],
    registers: [this.registry],
  });
  readonly audited = new Gauge({
    name: "hookbox_audit_rows_committed",
    help: "Audit rows committed by this process",
    registers: [this.registry],
  });
  /** Log lines not written because stderr could not take them (a closed pipe, say). */
  readonly logLinesDropped = new Counter({
    name: "hookbox_log_lines_dropped_total",
    help: "JSON log lines dropped because stderr could not take them " +
      "(its reader went away, or fell 8 MiB behind)",
    registers: [this.registry],
  });
  readonly auditCommits = new Gauge({
    name: "hookbox_audit_commits",
    help: "Audit transactions committed by this process (rows per commit shows the group commit)",
    registers: [this.registry],
  });

  /** Records an event of a capturing tenant: kept, or too large to keep. */
  captured(tenant: string, result: "kept" | "too_large"): void {
    this.#child(this.#captures, [tenant, result]).inc();
  }

  /** Records a shadow version's run beside a live event. */
  shadowed(tenant: string, hook: string, result: "agreed" | "disagreed" | "skipped"): void {
    this.#child(this.#shadowRuns, [tenant, hook, result]).inc();
  }

  /** Records one dispatch that was answered. */
  dispatched(tenant: string, result: DispatchResult, seconds: number, dryRun: boolean): void {
    this.#child(this.#dispatches, [tenant, result.decision, String(dryRun)]).inc();
    this.#child(this.#latency, [tenant]).observe(seconds);
    // Counted per outcome and code first: an event of a tenant with a thousand hooks
    // is a few increments, not a thousand label lookups on the request thread.
    for (const hook of result.hooks) {
      this.#child(this.#outcomes, [tenant, hook.name, hook.outcome]).inc();
      if ((hook.outcome === "limit" || hook.outcome === "timeout") && hook.code) {
        this.#child(this.#limits, [tenant, hook.name, hook.code]).inc();
      }
    }
  }

  readonly heldBytes = new Gauge({
    name: "hookbox_held_bytes",
    help:
      "Bytes tenants' requests hold in this process: bodies still arriving and answers of 16 KiB or more not yet read",
    registers: [this.registry],
  });

  /** Sets the gauge of what requests hold. */
  held(bytes: number): void {
    this.heldBytes.set(bytes);
  }

  /** Sets the audit gauges. */
  audit(rows: number, commits: number): void {
    this.audited.set(rows);
    this.auditCommits.set(commits);
  }

  /** Records an error answer. */
  rejected(code: string): void {
    this.#rejected.inc({ code });
  }

  /** Records one HTTP request. */
  request(method: string, route: string, status: number, seconds: number): void {
    const named = METHODS.has(method) ? method : OTHER;
    this.#child(this.#requests, [named, route, String(status)]).observe(seconds);
  }

  /**
   * The series of `metric` for `values` (its label values, in order), kept:
   * prom-client hashes a label object on every call, which is most of what
   * counting costs on the request thread. At most MAX_CHILDREN are kept; a
   * metric has at most {@linkcode MAX_SERIES} series.
   */
  #child<T extends { labels(...values: string[]): unknown }>(
    metric: T,
    values: string[],
  ): ReturnType<T["labels"]> {
    type C = ReturnType<T["labels"]>;
    const key = values.join("\0");
    let byKey = this.#children.get(metric);
    if (byKey === undefined) this.#children.set(metric, byKey = new Map());
    let child = byKey.get(key) as C | undefined;
    if (child === undefined) {
      if (byKey.size >= MAX_CHILDREN) byKey.clear();
      let made = this.#series.get(metric);
      if (made === undefined) this.#series.set(metric, made = new Set());
      let labels = values;
      if (!made.has(key)) {
        const last = values.length - 1;
        if (made.size >= MAX_SERIES) {
          labels = values.map((v, i) => i === last && i > 0 ? v : OTHER);
        } else if (this.#byTenant.has(metric) && last > 1) {
          let counts = this.#tenantSeries.get(metric);
          if (counts === undefined) this.#tenantSeries.set(metric, counts = new Map());
          const tenant = values[0]!;
          const had = counts.get(tenant) ?? 0;
          if (had >= MAX_TENANT_SERIES) {
            labels = values.map((v, i) => i === 0 || i === last ? v : OTHER);
          } else counts.set(tenant, had + 1);
        }
        made.add(labels.join("\0"));
      }
      child = metric.labels(...labels) as C;
      byKey.set(key, child);
    }
    return child;
  }

  readonly #children = new Map<object, Map<string, unknown>>();
  /** The series each metric has (their label values joined). */
  readonly #series = new Map<object, Set<string>>();
  /** Metrics whose first label is the tenant and whose middle labels a tenant names. */
  readonly #byTenant = new Set<object>([this.#outcomes, this.#limits, this.#shadowRuns]);
  /** Per metric of {@linkcode #byTenant}, the series each tenant has made. */
  readonly #tenantSeries = new Map<object, Map<string, number>>();

  #runtimeStats: (() => RuntimeStats | undefined) | null = null;

  /**
   * Reports what `read()` says the hook runtime holds (its workers, calls
   * running and queued, warm instances, kept plugins and their bytes) as the
   * `hookbox_runtime_*` gauges, read at each scrape. A field `read()` leaves
   * out reads as 0.
   */
  watchRuntime(read: () => RuntimeStats | undefined): void {
    if (this.#runtimeStats === null) {
      const figure = (field: keyof RuntimeStats) => this.#runtimeStats?.()?.[field] ?? 0;
      for (const [name, help, field] of RUNTIME_GAUGES) {
        new Gauge({
          name,
          help,
          registers: [this.registry],
          collect() {
            this.set(figure(field));
          },
        });
      }
    }
    this.#runtimeStats = read;
  }

  /** The text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
