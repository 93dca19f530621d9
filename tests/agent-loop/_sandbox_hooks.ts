/**
 * Sandboxed hook folders (JS, compiled to the QuickJS engine) for the agent
 * API tests: one per effect the seeds describe.
 */
import { hookMd } from "../_helpers.ts";

const READ = `const event = JSON.parse(require("fs").readFileSync(0, "utf8"));\n`;
const say = (control: string) => `console.log(JSON.stringify(${control}));`;

/** name → [frontmatter, scripts/run.js] */
export const SANDBOX_HOOKS: Record<string, [Record<string, unknown>, string]> = {
  "no-rm": [
    { trigger: "pre-tool-call", matcher: { tool: "^bash$", pattern: "rm\\s+-rf" }, priority: 900 },
    `${READ}console.error("rm -rf is not allowed"); process.exit(2);`,
  ],
  "search-limit": [
    { trigger: "pre-tool-call", matcher: { tool: "^search$" } },
    `${READ}${say("{ modified_input: { ...event.tool_input, limit: 5 } }")}`,
  ],
  "count-calls": [
    { trigger: "pre-tool-call", priority: 10 },
    `${READ}${say("{ store: { calls: ((event.store || {}).calls || 0) + 1 } }")}`,
  ],
  "redact": [
    { trigger: "post-tool-call", matcher: { tool: "^read$" } },
    `${READ}${
      say('{ modified_output: String(event.tool_output).replace(/sk-[a-z0-9]+/g, "[REDACTED]") }')
    }`,
  ],
  "explain-failure": [
    { trigger: "post-tool-call-failure" },
    `${READ}${
      say(
        '{ inject: [{ role: "system", content: "Tool " + event.tool_name + " failed: " + event.error }] }',
      )
    }`,
  ],
  "first-call-notes": [
    { trigger: "pre-llm-call" },
    `${READ}if (event.iteration === 1) ${
      say(`{
      inject: [
        { role: "system", content: "temporary note", persistent: false },
        { role: "system", content: "kept note", persistent: true },
      ],
      disable_tools: ["danger"],
    }`)
    }`,
  ],
  "polish": [
    { trigger: "post-llm-call" },
    `${READ}if (event.response.content.includes("draft")) ${
      say('{ modified_output: event.response.content.replace("draft", "final") }')
    }`,
  ],
  "gate": [
    { trigger: "pre-agent-turn-stop" },
    `${READ}if (!/tests/.test(event.last_message)) { console.error("run the tests first (" + event.stop_count + ")"); process.exit(2); }`,
  ],
  "no-subagents": [
    { trigger: "pre-subagent", matcher: { pattern: "forbidden" }, on_error: "closed" },
    `${READ}throw new Error("this hook crashes");`,
  ],
  "crashy": [
    { trigger: "post-subagent" },
    `${READ}throw new Error("crashes, fails open");`,
  ],
};

/** Writes {@linkcode SANDBOX_HOOKS} into `dir`. */
export async function writeSandboxHooks(dir: string): Promise<void> {
  for (const [name, [frontmatter, js]] of Object.entries(SANDBOX_HOOKS)) {
    await Deno.mkdir(`${dir}/${name}/scripts`, { recursive: true });
    await Deno.writeTextFile(`${dir}/${name}/HOOK.md`, hookMd({ name, ...frontmatter }));
    await Deno.writeTextFile(`${dir}/${name}/scripts/run.js`, js);
  }
}
