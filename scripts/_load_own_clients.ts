/**
 * The clients of `scripts/load.ts --hostile-clients N`, on a thread of their
 * own: the hostile (or "busy") tenant's N connections send events as fast as
 * they are answered until told to stop. Reading its answers (4 MiB each for
 * the `output` class) then never delays the event loop that times the other
 * tenants' requests, as a hostile tenant's client on another machine would
 * not; both still share the machine's cores.
 *
 * Started with `{ url, key, clients }`; `"stop"` ends the loops, and the
 * worker answers `{ latencies, answers, errors }`.
 *
 * @module
 */
import { RawHttpConnection } from "./_raw_http.ts";
import { loadEvent } from "./_load_event.ts";

interface Start {
  url: string;
  key: string;
  clients: number;
}

const scope = self as unknown as Worker & { close(): void };
let stopping = false;

scope.onmessage = async (message: MessageEvent<Start | "stop">) => {
  if (message.data === "stop") {
    stopping = true;
    return;
  }
  const { url, key, clients } = message.data;
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let answers = 0;
  const connections = await Promise.all(
    Array.from({ length: clients }, () => RawHttpConnection.open(url)),
  );
  scope.postMessage("ready");
  await Promise.all(connections.map(async (conn) => {
    for (let i = 0; !stopping; i++) {
      const t0 = performance.now();
      try {
        const { status } = await conn.request("POST", "/v1/events", {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
        }, JSON.stringify(loadEvent(i)));
        if (status === 200) answers++;
        else errors[status] = (errors[status] ?? 0) + 1;
      } catch (err) {
        errors[String(err)] = (errors[String(err)] ?? 0) + 1;
      }
      latencies.push(performance.now() - t0);
    }
    conn.close();
  }));
  scope.postMessage({ latencies, answers, errors });
  scope.close();
};
