/**
 * Agent CLIs' hooks: each agent's payload as a hookbox event, a result as the
 * agent's answer, payloads hookbox cannot evaluate, and `install`.
 *
 * @module
 */
export * from "./adapters.ts";
export * from "./event_text.ts";
export * from "./install.ts";
export * from "./unreadable.ts";
