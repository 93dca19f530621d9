/**
 * What the route handlers share: the service's parts, made once by
 * `createService` and handed to each resource's routes.
 *
 * @module
 */
import type { AuditWriter } from "../audit.ts";
import type { HookBuilder } from "../builder.ts";
import type { Engine } from "../engine.ts";
import type { ApiError } from "../errors.ts";
import type { Quotas } from "../quota.ts";
import type { ServiceMetrics } from "../service_metrics.ts";
import type { StopCounts } from "../stop_counts.ts";
import type { Store } from "../../store/store.ts";
import type { UploadGate } from "../upload_gate.ts";
import type { HeldBytes } from "../held_bytes.ts";
import type { StorageLimits } from "../storage.ts";
import type { Route } from "./route.ts";
import type { ShadowRunner } from "../replay.ts";
import type { EventCodec } from "../event_body.ts";

/** The service's parts, as the handlers see them. */
export interface ServiceContext {
  store: Store;
  engine: Engine;
  builder: HookBuilder;
  quotas: Quotas;
  audit: AuditWriter;
  metrics: ServiceMetrics;
  storage: StorageLimits;
  uploads: UploadGate;
  /** What each tenant's requests hold: bodies arriving, big answers unread (`held_bytes.ts`). */
  held: HeldBytes;
  stops: StopCounts;
  /** Runs shadow versions beside live events. */
  shadows: ShadowRunner;
  /** Reads big event bodies off the thread answering requests, if the service has one. */
  eventCodec: EventCodec | null;
  /** Wall time the hooks of an agent's event may take together, ms (`ServerDeps.agentEventMs`). */
  agentEventMs: number;
  /** Wall time an agent's call waits for its answer, ms (`ServerDeps.agentAnswerMs`). */
  agentAnswerMs: number;
  /** The decision log's sink, if any (see `ServerDeps.decisionLog`). */
  decisionLog: ((entry: Record<string, unknown>) => void) | null;
  /** Whether decision-log entries carry the event. */
  decisionLogEvents: boolean;
  /** Milliseconds since the epoch. */
  now(): number;
  /** `now()` as ISO text. */
  iso(): string;
  log(entry: Record<string, unknown>): void;
  /** The `503 SHUTTING_DOWN` error while the server drains, else null. */
  draining(): ApiError | null;
  /** Every route of the service (the OpenAPI document is made of them). */
  routes(): readonly Route[];
}
