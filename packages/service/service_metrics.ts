/**
 * What the service reports to its metrics, as an interface: the Prometheus
 * implementation (`metrics.ts`, npm `prom-client`, Node built-ins) is passed
 * in by the Deno adapter, so the app itself stays Web-API only (edge Workers
 * run it without metrics).
 *
 * @module
 */
import type { DispatchResult } from "../core/dispatch/result.ts";

/** The service's metrics sink. */
export interface ServiceMetrics {
  /** Records one dispatch that was answered. */
  dispatched(tenant: string, result: DispatchResult, seconds: number, dryRun: boolean): void;
  /** Records an event of a capturing tenant: kept, or too large to keep (docs/replay.md). */
  captured(tenant: string, result: "kept" | "too_large"): void;
  /** Records a shadow version's run beside a live event (docs/replay.md). */
  shadowed(tenant: string, hook: string, result: "agreed" | "disagreed" | "skipped"): void;
  /** Records an error answer. */
  rejected(code: string): void;
  /** Records one HTTP request: its route as declared (`/v1/hooks/{name}`), status and time. */
  request(method: string, route: string, status: number, seconds: number): void;
  /** Audit rows and commits so far (set before each exposition). */
  audit(rows: number, commits: number): void;
  /** Bytes all tenants' requests hold: bodies arriving, big answers unread (set as the audit's). */
  held(bytes: number): void;
  /** The text exposition of `GET /metrics`. */
  text(): Promise<string>;
}

/** Metrics that record nothing (`GET /metrics` answers an empty exposition). */
export const NO_METRICS: ServiceMetrics = {
  dispatched: () => {},
  captured: () => {},
  shadowed: () => {},
  rejected: () => {},
  request: () => {},
  audit: () => {},
  held: () => {},
  text: () => Promise.resolve(""),
};
