/**
 * `deno task serve`: the service on the embedded store with the built-in
 * hooks (hooks/*) installed as platform hooks and a `demo` tenant, then a
 * `curl` line that works. Compiles each built-in hook locally (cached) and
 * uploads its plugin through the admin API, like an operator would.
 *
 *   deno task serve [--port 8787] [--db URL]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { startServer } from "../packages/deno/serve/serve.ts";
import { newKey } from "../packages/service/auth.ts";
import { builtinHookUploads } from "./_builtin_hooks.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { port: { type: "string", default: "8787" }, db: { type: "string" } },
});
const adminKey = Deno.env.get("HOOKBOX_ADMIN_KEY") || newKey();
const server = await startServer({
  port: Number(values.port),
  adminKey,
  ...(values.db ? { db: values.db } : {}),
  log: () => {},
});
const api = async (method: string, path: string, key: string, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};

for (const { name, files } of await builtinHookUploads()) {
  const up = await api("PUT", `/v1/platform/hooks/${name}`, adminKey, { files });
  console.error(
    `platform hook ${name}: ${
      up.status === 201 ? `version ${up.body.version}` : JSON.stringify(up.body)
    }`,
  );
}
await api("POST", "/v1/tenants", adminKey, { id: "demo" });
const { body } = await api("POST", "/v1/tenants/demo/keys", adminKey, { name: "demo" });
const event = JSON.stringify({
  event_type: "pre-tool-call",
  session_id: "demo",
  tool_name: "Bash",
  tool_input: { command: "rm -rf /" },
});
console.log(`
hookbox is serving on ${server.url} (admin key: ${adminKey})
Try it — the built-in shell-guard blocks this command:

  curl -s -X POST ${server.url}/v1/events -H 'Authorization: Bearer ${body.key}' -d '${event}'

Ctrl-C stops the server.`);
const stop = () => server.shutdown();
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
await server.finished;
await server.shutdown();
