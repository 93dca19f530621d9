/**
 * The final-value rule (SPEC §4.6): what the caller acts on — the input or
 * output after every rewrite — is what every synchronous hook of the event
 * that can block has seen without blocking. A chain runs its hooks once, so a
 * hook that allowed the original value never saw a later hook's rewrite, and
 * a guard whose matcher did not fit the original may fit the rewrite. After a
 * chain that rewrote, every such hook (re-selected by its matcher on the
 * rewritten value) is run once more on the value that stands; a block or a
 * closed failure there blocks the event. A re-check is a check: what it
 * rewrites, injects or stores is recorded, not applied, so the value cannot
 * move again and the check ends in one pass (docs/DECISIONS.md).
 *
 * @module
 */
import type { HookDefinition } from "../hook/types.ts";
import type { HookEvent } from "../schema/event.ts";
import { UNBLOCKABLE_EVENTS } from "../schema/event_types.ts";
import { readStdout } from "../schema/output.ts";
import { inputField, outputField } from "./fields.ts";
import type { DispatchResult, HookRecord } from "./result.ts";
import type { HookSelector } from "./dispatch.ts";
import { copyLazy, stringifyLazy, unreadToken } from "../schema/lazy_json.ts";

/** Runs `hooks` as a chain on `event` (the dispatcher's own chain runner). */
export type ChainRunner = (
  hooks: readonly HookDefinition[],
  event: HookEvent,
) => Promise<DispatchResult>;

/** The event fields a rewrite replaces, for this event type. */
interface Fields {
  input: string | null;
  output: string | null;
}

/** The note on a re-check's record. */
export const RECHECK_NOTE = "re-check of the rewritten value";

/**
 * Re-checks the rewritten value of an allowed `result` against every
 * synchronous hook in `hooks` that has not seen it, and returns the result
 * the caller may act on: `result` itself when nothing was rewritten, else
 * with the re-checks' records appended and, when one of them blocks, blocked.
 * `select` picks the hooks that fit the rewritten event, as the chain's did.
 */
export async function recheckRewrites(
  hooks: readonly HookDefinition[],
  event: HookEvent,
  result: DispatchResult,
  select: HookSelector,
  run: ChainRunner,
): Promise<DispatchResult> {
  if (result.decision === "block" || UNBLOCKABLE_EVENTS.has(event.event_type)) return result;
  if (result.modified_input === null && result.modified_output === null) return result;
  const fields: Fields = {
    input: inputField(event.event_type)?.name ?? null,
    output: outputField(event.event_type),
  };
  const seen = seenInChain(result.hooks, event, fields);
  const final: HookEvent = withRewrites(event, fields, result);
  final.store = { ...result.store };
  const key = subjectKey(final, fields);
  const sync = hooks.filter((h) => !h.manifest.async && h.entry.runtime !== "prompt");
  for (const hook of await select(sync, final)) {
    if (seen.get(idOf(hook)) === key) continue;
    const checked = copyLazy(final);
    checked.store = { ...result.store };
    const check = await run([hook], checked);
    for (const record of check.hooks) result.hooks.push(marked(record, check, fields, final));
    if (check.decision === "block") {
      result.decision = "block";
      result.blocked_by = check.blocked_by;
      result.reason = `${check.reason ?? "blocked"} (on re-check of a rewritten value)`;
      return result;
    }
  }
  return result;
}

/** A hook's identity within one dispatch (names are unique per level). */
function idOf(hook: { level: string; name: string }): string {
  return `${hook.level}:${hook.name}`;
}

/**
 * The rewritable fields of `event`, as text to compare. A big part of the
 * agent's event still unread (`lazy_json.ts`) is named, not parsed: a
 * rewrite to an equal value then counts as a change, which costs a re-check,
 * never a missed one.
 */
function subjectKey(event: HookEvent, fields: Fields): string {
  const part = (field: string | null) =>
    field === null ? "null" : unreadToken(event, field) ?? stringifyLazy(event[field] ?? null);
  return `[${part(fields.input)},${part(fields.output)}]`;
}

/** `event` with a chain's rewrites applied. */
function withRewrites(event: HookEvent, fields: Fields, result: DispatchResult): HookEvent {
  const next: HookEvent = copyLazy(event);
  if (fields.input !== null && result.modified_input !== null) {
    next[fields.input] = result.modified_input;
  }
  if (fields.output !== null && result.modified_output !== null) {
    next[fields.output] = result.modified_output;
  }
  return next;
}

/**
 * The value each hook of the first chain saw, rebuilt from its records in
 * order: a hook sees the rewrites of the hooks before it, and its own.
 */
function seenInChain(
  records: readonly HookRecord[],
  event: HookEvent,
  fields: Fields,
): Map<string, string> {
  const seen = new Map<string, string>();
  let current = event;
  let key = subjectKey(current, fields);
  for (const record of records) {
    if (record.outcome === "async") continue;
    if (record.outcome === "ok") {
      const reading = readStdout(record.stdout);
      if (reading.kind === "control") {
        const { modified_input, modified_output } = reading.control;
        current = withRewrites(current, fields, {
          modified_input: modified_input ?? null,
          modified_output: modified_output ?? null,
        } as DispatchResult);
        if (modified_input !== undefined || modified_output !== undefined) {
          key = subjectKey(current, fields);
        }
      }
    }
    seen.set(idOf(record), key);
  }
  return seen;
}

/** A re-check's record, saying so (and what it asked for that was not applied). */
function marked(
  record: HookRecord,
  check: DispatchResult,
  fields: Fields,
  final: HookEvent,
): HookRecord {
  const moved = subjectKey(withRewrites(final, fields, check), fields);
  const note = moved !== subjectKey(final, fields)
    ? `${RECHECK_NOTE}; its rewrite was not applied`
    : RECHECK_NOTE;
  return { ...record, detail: record.detail === null ? note : `${note}: ${record.detail}` };
}
