/**
 * The event reference in docs/ is what the schemas say: docs/events.md and
 * docs/events/*.schema.json are regenerated here and compared with the
 * committed files (formatted as `deno fmt` writes them), and every schema
 * accepts a real event of its type and refuses one without a required field.
 */
import assert from "node:assert/strict";
import Ajv2020 from "ajv/dist/2020.js";
import { eventDocs } from "../../../scripts/_event_docs.ts";
import { EVENT_TYPES } from "../../../packages/core/schema/event_types.ts";
import { ROOT, tempDir } from "../../_helpers.ts";

Deno.test("docs/events.md and docs/events/*.schema.json are what scripts/event_schemas.ts writes", async () => {
  const files = await eventDocs();
  const dir = await tempDir("hookbox-events-");
  try {
    for (const [path, text] of files) {
      await Deno.mkdir(`${dir}/${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeTextFile(`${dir}/${path}`, text);
    }
    const fmt = await new Deno.Command(Deno.execPath(), {
      args: [
        "fmt",
        "--quiet",
        "--line-width",
        "100",
        ...[...files.keys()].map((p) => `${dir}/${p}`),
      ],
      cwd: ROOT,
    }).output();
    assert.ok(fmt.success);
    for (const path of files.keys()) {
      const want = await Deno.readTextFile(`${dir}/${path}`);
      const have = await Deno.readTextFile(`${ROOT}/${path}`).catch(() => "(missing)");
      assert.equal(have, want, `${path} drifted: run deno run -A scripts/event_schemas.ts`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("each event's JSON Schema takes a valid event of its type and refuses one missing a field", async () => {
  const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false });
  for (const type of EVENT_TYPES) {
    const schema = JSON.parse(await Deno.readTextFile(`${ROOT}/docs/events/${type}.schema.json`));
    const validate = ajv.compile(schema);
    const required = schema.required as string[];
    const event: Record<string, unknown> = { event_type: type, session_id: "s" };
    for (const field of required) {
      if (!(field in event)) {
        const prop = schema.properties[field];
        event[field] = prop.type === "object"
          ? {}
          : prop.type === "array"
          ? []
          : prop.type === "integer"
          ? 0
          : "x";
      }
    }
    assert.ok(validate(event), `${type}: ${JSON.stringify(validate.errors)}`);
    assert.equal(validate({ ...event, session_id: undefined }), false, type);
  }
});
