/**
 * The README's tour runs as written: its command-line block, its service
 * block and its library snippet are taken from README.md and run, with
 * `/tmp/tour` moved to a folder of the test's own and the service on a free
 * port (the only changes). The edge block is left out: it fetches workerd with
 * npx (the edge bundle is tested with a real workerd in tests/edge/).
 */
import assert from "node:assert/strict";
import { ROOT, tempDir } from "./_helpers.ts";

const README = await Deno.readTextFile(`${ROOT}/README.md`);

/** The first fenced block of `lang` after the heading `heading`. */
function block(heading: string, lang: string): string {
  const at = README.indexOf(`### ${heading}\n`);
  assert.ok(at >= 0, `README has "### ${heading}"`);
  const open = README.indexOf("```" + lang + "\n", at);
  const close = README.indexOf("\n```\n", open);
  return README.slice(open + lang.length + 4, close + 1);
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

async function bash(script: string) {
  const out = await new Deno.Command("bash", {
    args: ["-c", script],
    cwd: ROOT,
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "/tmp" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("README: the command-line, service and library parts of the tour run as written", async () => {
  const dir = await tempDir("hookbox-tour-");
  const here = (text: string) => text.replaceAll("/tmp/tour", dir);
  try {
    // A hook, run from the command line: blocked, exit 2.
    const cli = await bash(here(block("A hook, run from the command line", "sh")));
    assert.match(cli.stdout, /^exit 2$/m, cli.stdout + cli.stderr);
    assert.match(cli.stderr, /force pushes are not allowed/);

    // As a service for many tenants: the upload, the blocked event and its audit row.
    const port = String(freePort());
    const service = here(block("As a service for many tenants", "sh")).replaceAll("8787", port);
    const run = await bash(`${service}\nkill %1; wait`);
    assert.match(run.stdout, /"version":1/, run.stdout + run.stderr);
    assert.match(run.stdout, /"decision":"block","reason":"force pushes are not allowed"/);
    assert.match(run.stdout, /"items":\[\{"decision_id":"dec_/);

    // As a library.
    const snippet = here(block("As a library", "ts"))
      .replace("./packages/hookbox/deno.ts", `${ROOT}/packages/hookbox/deno.ts`);
    await Deno.writeTextFile(`${dir}/tour.ts`, snippet);
    const lib = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", `--config=${ROOT}/deno.json`, `${dir}/tour.ts`],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(lib.stdout);
    assert.equal(lib.code, 0, new TextDecoder().decode(lib.stderr));
    assert.equal(said.trim(), "block force pushes are not allowed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
