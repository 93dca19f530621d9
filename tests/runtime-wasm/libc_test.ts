/** An unmodified wasi-libc C program runs as a WASI command hook. Needs clang + wasi-libc. */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { corpusRuntime, request, shellEvent, wasmHook, withoutFuel } from "./_corpus.ts";

const source = new URL("./libc_guard.c", import.meta.url).pathname;

async function build(): Promise<Uint8Array | null> {
  const out = await Deno.makeTempFile({ suffix: ".wasm" });
  try {
    const args = ["--target=wasm32-wasi", "--sysroot=/usr", "-O2", "-o", out, source];
    const result = await new Deno.Command("clang", { args, stderr: "null" }).output();
    return result.success ? await Deno.readFile(out) : null;
  } catch {
    return null;
  } finally {
    await Deno.remove(out).catch(() => {});
  }
}

const bytes = await build();

for (const isolation of ["fresh", "warm"]) {
  Deno.test({
    name: `run() runs a wasi-libc C program (${isolation}): stdin, stdout, exit 2, no files`,
    ignore: bytes === null,
    async fn() {
      const runtime = corpusRuntime({ libc_guard: bytes! });
      const hook = wasmHook("libc_guard", { isolation });
      const event = shellEvent("ls");
      const allowed = await runtime.run(request(hook, event));
      const len = JSON.stringify(event).length;
      assertEquals(withoutFuel(allowed), {
        exitCode: 0,
        stdout: `{"len":${len},"fopen":false,"t":1}\n`,
        stderr: "",
      });
      const blocked = await runtime.run(request(hook, shellEvent("rm -rf /")));
      assertEquals(withoutFuel(blocked), {
        exitCode: 2,
        stdout: "",
        stderr: "rm -rf is not allowed",
      });
      await runtime.close?.();
    },
  });
}
