/**
 * Writes the event reference (`docs/events.md`, `docs/events/*.schema.json`)
 * from the zod schemas that validate events, formatted as `deno fmt` would.
 *
 *   deno run -A scripts/event_schemas.ts
 *
 * @module
 */
import { eventDocs } from "./_event_docs.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const files = await eventDocs();
await Deno.mkdir(`${ROOT}docs/events`, { recursive: true });
for (const [path, text] of files) await Deno.writeTextFile(`${ROOT}${path}`, text);
const fmt = await new Deno.Command(Deno.execPath(), {
  args: ["fmt", ...[...files.keys()].map((p) => `${ROOT}${p}`)],
  stdout: "null",
  stderr: "null",
}).output();
if (!fmt.success) throw new Error("deno fmt failed on the event reference");
console.log(`wrote ${files.size} files`);
