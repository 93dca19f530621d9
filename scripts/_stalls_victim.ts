/**
 * The victim of `scripts/bench_stalls.ts`, on a thread of its own: one event
 * at a time on its own connection, for as long as it runs, so the hostile
 * requests the main thread builds, sends and reads (a megabyte of JSON, a
 * trickled body) never delay the loop that times the victim's.
 *
 * Started with `{ url, key, body }`; answers `"ready"` once its connection is
 * open. `{ from, to }` (times since the epoch, ms) answers the latencies (ms)
 * of the events sent in that span, once the last of them is answered, and
 * forgets every event sent before `to`; `"stop"` ends it after answering
 * `"stopped"`.
 *
 * @module
 */
import { RawHttpConnection } from "./_raw_http.ts";

interface Start {
  url: string;
  key: string;
  body: string;
}

interface Take {
  from: number;
  to: number;
}

const scope = self as unknown as Worker & { close(): void };
/** [sent at (ms since the epoch), latency (ms)] of each answered event. */
let samples: [number, number][] = [];
/** The event being answered: when it was sent, and its answer. */
let inFlight: { at: number; done: Promise<void> } | null = null;
let stopping = false;
let failure: string | null = null;
const now = () => performance.timeOrigin + performance.now();

scope.onmessage = async (message: MessageEvent<Start | Take | "stop">) => {
  if (message.data === "stop") {
    stopping = true;
    return;
  }
  if ("from" in message.data) {
    const { from, to } = message.data;
    // An event sent within the span but not yet answered belongs to it: wait for it.
    if (inFlight !== null && inFlight.at < to) await inFlight.done;
    scope.postMessage(
      failure ?? samples.filter(([at]) => at >= from && at < to).map(([, ms]) => ms),
    );
    samples = samples.filter(([at]) => at >= to);
    return;
  }
  const { url, key, body } = message.data;
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const conn = await RawHttpConnection.open(url);
  scope.postMessage("ready");
  while (!stopping && failure === null) {
    const at = now();
    let answered!: () => void;
    inFlight = { at, done: new Promise<void>((resolve) => answered = resolve) };
    const answer = await conn.request("POST", "/v1/events", headers, body).catch((e) => e);
    if (answer instanceof Error) failure = `victim event failed: ${answer.message}`;
    else if (answer.status !== 200) failure = `victim event answered ${answer.status}`;
    else samples.push([at, now() - at]);
    inFlight = null;
    answered();
  }
  conn.close();
  scope.postMessage("stopped");
  scope.close();
};
