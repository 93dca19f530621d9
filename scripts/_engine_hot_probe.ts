/**
 * Runs one JS hook plugin (an engine snapshot, not instrumented) on one event
 * with inert WASI imports, for `scripts/engine_hot.ts`, which starts it with
 * V8's `--trace-wasm-compilation-times` and reads which functions the call
 * compiled. Only for hookbox's own built-in hooks: nothing here limits the
 * plugin the way the runtime does.
 *
 *   deno run --v8-flags=... scripts/_engine_hot_probe.ts PLUGIN.wasm EVENT.json
 *
 * @module
 */
const [pluginPath, eventPath] = Deno.args;
const plugin = await Deno.readFile(pluginPath!);
const input = await Deno.readFile(eventPath!);
let memory: WebAssembly.Memory | null = null;
let offset = 0;
const view = () => new DataView(memory!.buffer);
class Exit extends Error {}
const iovecs = (iovs: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    at: view().getUint32(iovs + 8 * i, true),
    length: view().getUint32(iovs + 8 * i + 4, true),
  }));
const wasi = {
  environ_get: () => 0,
  environ_sizes_get: (count: number, size: number) => {
    view().setUint32(count, 0, true);
    view().setUint32(size, 0, true);
    return 0;
  },
  clock_time_get: (_id: number, _precision: bigint, out: number) => {
    view().setBigUint64(out, BigInt(Date.now()) * 1_000_000n, true);
    return 0;
  },
  fd_close: () => 0,
  fd_fdstat_get: () => 0,
  fd_seek: () => 0,
  fd_read: (_fd: number, iovs: number, count: number, read: number) => {
    let total = 0;
    for (const { at, length } of iovecs(iovs, count)) {
      const chunk = input.subarray(offset, offset + length);
      new Uint8Array(memory!.buffer, at, chunk.length).set(chunk);
      offset += chunk.length;
      total += chunk.length;
    }
    view().setUint32(read, total, true);
    return 0;
  },
  fd_write: (_fd: number, iovs: number, count: number, written: number) => {
    const total = iovecs(iovs, count).reduce((n, { length }) => n + length, 0);
    view().setUint32(written, total, true);
    return 0;
  },
  proc_exit: (code: number) => {
    throw new Exit(`exit ${code}`);
  },
  random_get: () => 0,
};
const { instance } = await WebAssembly.instantiate(plugin, {
  wasi_snapshot_preview1: wasi,
  hookbox: { should_interrupt: () => 0 },
});
memory = instance.exports.memory as WebAssembly.Memory;
try {
  (instance.exports._start as () => void)();
} catch (err) {
  if (!(err instanceof Exit)) throw err;
}
