/**
 * Main-thread half of worker-mode Extism HTTP: performs a worker's
 * {@linkcode HttpAsk} with `fetch` — host re-checked against the hook's
 * `allowed_hosts`, redirects not followed, bounded by the call's remaining
 * time and a body cap — and answers into the worker's shared buffer.
 *
 * @module
 */
import { readCapped } from "../../core/bytes.ts";
import { answerHttp, hostAllowed, type HttpAsk, type HttpReply } from "./_http_wire.ts";
import { addressRefusal } from "./_http_address.ts";

/** Serves `ask` for a hook granted `allowedHosts`; `stop` aborts (worker killed, runtime closed). */
export async function serveHttp(
  ask: HttpAsk,
  allowedHosts: readonly string[],
  stop: AbortSignal,
): Promise<void> {
  answerHttp(ask.buffer, await perform(ask, allowedHosts, stop));
}

async function perform(
  ask: HttpAsk,
  allowedHosts: readonly string[],
  stop: AbortSignal,
): Promise<HttpReply> {
  const { url, method, headers, body } = ask.call;
  const hostname = URL.canParse(url) ? new URL(url).hostname : "";
  if (!hostAllowed(hostname, allowedHosts)) {
    return { kind: "error", message: `denied: ${hostname}` };
  }
  const refusal = await addressRefusal(hostname, allowedHosts);
  if (refusal !== null) return { kind: "error", message: refusal };
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), ask.timeoutMs);
  const signal = AbortSignal.any([timeout.signal, stop]);
  try {
    const init: RequestInit = { method, headers, redirect: "manual", signal };
    if (body !== null) init.body = body as Uint8Array<ArrayBuffer>;
    const response = await fetch(url, init);
    const data = await readCapped(response.body, ask.maxBytes);
    if (data === null) {
      return { kind: "error", message: `response body over ${ask.maxBytes} bytes` };
    }
    return { kind: "ok", status: response.status, body: data };
  } catch (err) {
    if (timeout.signal.aborted) return { kind: "timeout" };
    return { kind: "error", message: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}
