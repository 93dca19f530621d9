/**
 * `GET /docs`: the OpenAPI document as one HTML page, rendered here (no
 * script, nothing fetched from elsewhere): each route by group with who may
 * call it, its parameters, its body's schema name and every status it
 * answers; then the error codes.
 *
 * @module
 */

type Json = Record<string, unknown>;

const escape = (text: unknown) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The HTML page of `doc` (an OpenAPI 3.1 document as `openApiDocument` builds it). */
export function docsPage(doc: Json): string {
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>;
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = ((op.tags as string[] | undefined) ?? ["service"])[0]!;
      const params = ((op.parameters as Json[] | undefined) ?? [])
        .map((p) => `<code>${escape(p.name)}</code> (${escape(p.in)})`).join(", ");
      const body = (op.requestBody as Json | undefined)?.content as Json | undefined;
      const media = body
        ? Object.keys(body).map((m) => `<code>${escape(m)}</code>`).join(", ")
        : "";
      const statuses = Object.entries((op.responses ?? {}) as Record<string, Json>)
        .map(([status, r]) => `<li><b>${escape(status)}</b> ${escape(r.description)}</li>`)
        .join("");
      const html = `<section id="${escape(op.operationId)}">
<h3><code>${escape(method.toUpperCase())} ${escape(path)}</code></h3>
<p>${escape(op.summary)} ${escape(op.description ?? "")}</p>
${params ? `<p>Parameters: ${params}</p>` : ""}${media ? `<p>Body: ${media}</p>` : ""}
<ul>${statuses}</ul>
</section>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  const codes = ((schemas.ErrorCode?.enum ?? []) as string[]).map((c) =>
    `<code>${escape(c)}</code>`
  );
  const info = (doc.info ?? {}) as Json;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(info.title)} API</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
code{background:#f3f3f3;padding:0 .2rem}section{border-top:1px solid #ddd}</style></head>
<body><h1>${escape(info.title)} API ${escape(info.version)}</h1>
<p>${escape(info.description)} Every request but <code>/healthz</code>, <code>/openapi.json</code>
and <code>/docs</code> carries <code>Authorization: Bearer KEY</code>. The machine-readable
document: <a href="openapi.json">/openapi.json</a>.</p>
${[...byTag].map(([tag, ops]) => `<h2>${escape(tag)}</h2>\n${ops.join("\n")}`).join("\n")}
<h2>Error codes</h2><p>Every error answer is <code>{"error": {"code", "message"}}</code>; the codes:
${codes.join(", ")}.</p>
</body></html>
`;
}
