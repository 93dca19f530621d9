/**
 * Worker entry of the event codec (`event_codec.ts`): makes one big event
 * body at a time into its event (answered packed, `service/event_body.ts`),
 * or one big answer into its JSON bytes, at a lower priority than the thread
 * that answers requests.
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

/** One body to read, or one answer to write. */
export type CodecJob =
  | { read: Uint8Array; source: EventBodySource }
  | { write: TokenizedValue };

/** The answer to a {@linkcode CodecJob}. */
export type CodecAnswer =
  | { message: EventBodyMessage }
  | { bytes: Uint8Array }
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
    } else {
      const bytes = tokenizedJsonBytes(job.write);
      scope.postMessage({ bytes }, [bytes.buffer as ArrayBuffer]);
    }
  } catch (err) {
    scope.postMessage({ failure: err instanceof Error ? err.message : String(err) });
  }
};
