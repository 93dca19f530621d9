/**
 * Distinct small JS hooks, one per tenant, for the edge benchmarks: five
 * kinds a platform's tenants write (a word guard, a function-style tool
 * guard, a context injector, an input rewriter, a path guard), each with
 * its tenant's own words, patterns and messages, so that no two compile to
 * the same plugin.
 *
 * @module
 */

/** The script (`scripts/run.js` or `.mjs`) of tenant `i`'s hook. */
export function tenantScript(i: number): { name: string; source: string } {
  const word = `w${(i * 7919) % 100_003}`;
  const words = Array.from({ length: 2 + (i % 5) }, (_, k) => `${word}x${k}`);
  switch (i % 5) {
    case 0:
      return {
        name: "run.js",
        source: `const fs = require("fs");
const e = JSON.parse(fs.readFileSync(0, "utf8"));
const banned = ${JSON.stringify(words)};
const command = String(e.tool_input?.command ?? "");
const hit = banned.find((w) => command.includes(w));
if (hit) {
  process.stderr.write("tenant ${i} does not allow " + hit);
  process.exit(2);
}
`,
      };
    case 1:
      return {
        name: "run.mjs",
        source: `const TOOLS = /^(${words.join("|")})$/;
export default function (event) {
  if (TOOLS.test(event.tool_name ?? "")) {
    return { decision: "block", reason: \`tenant ${i}: \${event.tool_name} is not for this project\` };
  }
}
`,
      };
    case 2:
      return {
        name: "run.mjs",
        source: `const NOTES = ${JSON.stringify(words.map((w) => `Remember ${w} (tenant ${i}).`))};
export default function (event) {
  const note = NOTES[(event.session_id ?? "").length % NOTES.length];
  return { inject: [{ text: note }] };
}
`,
      };
    case 3:
      return {
        name: "run.mjs",
        source: `const FLAG = ${JSON.stringify(`--${word}`)};
export default function (event) {
  const command = event.tool_input?.command;
  if (typeof command === "string" && command.startsWith("git push") && !command.includes(FLAG)) {
    return { modified_input: { ...event.tool_input, command: command + " " + FLAG } };
  }
}
`,
      };
    default:
      return {
        name: "run.js",
        source: `const fs = require("fs");
const e = JSON.parse(fs.readFileSync(0, "utf8"));
const roots = ${JSON.stringify(words.map((w) => `/srv/${w}/`))};
const path = String(e.tool_input?.file_path ?? e.tool_input?.path ?? "");
for (const root of roots) {
  if (path.startsWith(root)) {
    console.log(JSON.stringify({ decision: "block", reason: "tenant ${i} keeps " + root + " read-only" }));
    process.exit(0);
  }
}
`,
      };
  }
}

/** A command tenant `i`'s hook blocks when the event is a Bash call running it (kinds 0 and 1). */
export function blockedBy(i: number): { tool_name: string; command: string } | null {
  const word = `w${(i * 7919) % 100_003}`;
  if (i % 5 === 0) return { tool_name: "Bash", command: `echo ${word}x0` };
  if (i % 5 === 1) return { tool_name: `${word}x0`, command: "ls" };
  return null;
}
