/**
 * Worker entry of the event codec (`event_codec.ts`): makes one big event
 * body at a time into its event (answered packed, `service/event_body.ts`),
 * one big answer into its JSON bytes, or decides the tenant matchers that
 * cost too much for the thread that answers requests (`selectHooksApart`),
 * at a lower priority than that thread.
 *
 * @module
 */
import {
  type EventBodyMessage,
  eventBodyMessage,
  type EventBodySource,
  readEventBody,
} from "../../service/event_body.ts";
import { lowerThreadPriority } from "../../host-deno/thread_priority.ts";
import { tokenizedJsonBytes, type TokenizedValue } from "../../core/schema/lazy_json.ts";
import { type MatcherJob, matcherVerdicts } from "../../core/dispatch/select.ts";

/** One body to read, one answer to write, or matchers to decide. */
export type CodecJob =
  | { read: Uint8Array; source: EventBodySource }
  | { write: TokenizedValue }
  | { match: MatcherJob };

/** The answer to a {@linkcode CodecJob}. */
export type CodecAnswer =
  | { message: EventBodyMessage }
  | { bytes: Uint8Array }
  | { verdicts: boolean[] }
  | { failure: string };

interface CodecScope {
  postMessage(message: CodecAnswer, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<CodecJob>) => void) | null;
}

const scope = globalThis as unknown as CodecScope;
const lowered = lowerThreadPriority().catch(() => false);

scope.onmessage = async ({ data: job }) => {
  await lowered;
  try {
    if ("read" in job) {
      scope.postMessage({ message: eventBodyMessage(readEventBody(job.read, job.source)) });
    } else if ("match" in job) {
      scope.postMessage({ verdicts: matcherVerdicts(job.match) });
    } else {
      const bytes = tokenizedJsonBytes(job.write);
      scope.postMessage({ bytes }, [bytes.buffer as ArrayBuffer]);
    }
  } catch (err) {
    scope.postMessage({ failure: err instanceof Error ? err.message : String(err) });
  }
};
