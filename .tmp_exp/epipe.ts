const dir = await Deno.makeTempDir();
const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    "src/cli.ts",
    "serve",
    "--port",
    "0",
    "--db",
    `sqlite:${dir}/h.db`,
    "--workers",
    "0",
  ],
  env: { HOOKBOX_ADMIN_KEY: "adminadminadminadmin" },
  stdout: "null",
  stderr: "piped",
}).spawn();
const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
let text = "";
let url = "";
while (!url) {
  const { value } = await reader.read();
  text += value;
  url = /listening on (\S+)/.exec(text)?.[1] ?? "";
}
await reader.cancel();
console.log("url", url);
for (let i = 0; i < 20; i++) {
  try {
    const r = await fetch(`${url}/healthz`);
    await r.text();
    const t = await fetch(`${url}/v1/tenants`, {
      headers: { authorization: "Bearer adminadminadminadmin" },
    });
    await t.text();
    console.log(i, r.status, t.status);
  } catch (e) {
    console.log(i, "ERR", String(e).slice(0, 80));
    break;
  }
  await new Promise((r) => setTimeout(r, 100));
}
const st = await Promise.race([
  child.status,
  new Promise((r) => setTimeout(() => r("alive"), 200)),
]);
console.log("child", JSON.stringify(st));
try {
  child.kill();
} catch {}
