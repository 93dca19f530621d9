/**
 * Helpers for end-to-end plugin tests: plugin bytes (the corpus `.wat` files
 * compiled with npm `wabt`, garbage, an oversized module) written as
 * `<hook>/plugin.wasm` next to a HOOK.md, and result summaries that drop
 * timings.
 *
 * @module
 */
import type { DispatchResult, HookRecord } from "../../packages/hookbox/deno.ts";
import { hookMd } from "../_helpers.ts";
import { corpus } from "../runtime-wasm/_corpus.ts";

/** Bytes that are not a WebAssembly module at all. */
export const GARBAGE: Uint8Array = new TextEncoder().encode("#!/bin/sh\nrm -rf / # not wasm\n");

/**
 * A valid module of `kb` KiB plus a few bytes: magic, version and one custom
 * section padded with zeros. Over a `kb` KiB cap it must be refused before
 * anything parses it.
 */
export function hugeModule(kb: number): Uint8Array {
  const name = new TextEncoder().encode("padding");
  const payload = kb * 1024 + 1 - name.length - 1;
  const size = leb(name.length + 1 + payload);
  const out = new Uint8Array(8 + 1 + size.length + 1 + name.length + payload);
  out.set([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x00]);
  out.set(size, 9);
  out[9 + size.length] = name.length;
  out.set(name, 10 + size.length);
  return out;
}

/** LEB128 of `value`. */
export function leb(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    bytes.push(byte);
  } while (value > 0);
  return bytes;
}

/** Plugin bytes by name: a corpus file, or `garbage`. */
export async function pluginBytes(name: string): Promise<Uint8Array> {
  return name === "garbage" ? GARBAGE : await corpus(name);
}

/**
 * Writes hook `name` into `parent`: `plugin.wasm` = `bytes` and a HOOK.md
 * with `frontmatter` (description and trigger filled in). Returns its folder.
 */
export async function writePluginHook(
  parent: string,
  name: string,
  bytes: Uint8Array,
  frontmatter: Record<string, unknown> = {},
): Promise<string> {
  const dir = `${parent}/${name}`;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/HOOK.md`, hookMd({ name, ...frontmatter }));
  await Deno.writeFile(`${dir}/plugin.wasm`, bytes);
  return dir;
}

/** A hook record without its timing, for comparisons. */
export type RecordSummary = Omit<HookRecord, "duration_ms" | "fuel">;

/** A dispatch result without timings, for comparisons. */
export type ResultSummary = Omit<DispatchResult, "hooks"> & { hooks: RecordSummary[] };

/** Drops `duration_ms` and `fuel` (they vary) from every hook record. */
export function summary(result: DispatchResult): ResultSummary {
  return {
    ...result,
    hooks: result.hooks.map(({ duration_ms: _, fuel: _fuel, ...rest }) => rest),
  };
}

/** A pre-tool-call event running `command` through `tool`. */
export function toolCall(command: string, tool = "Bash"): Record<string, unknown> {
  return {
    event_type: "pre-tool-call",
    session_id: "s1",
    tool_name: tool,
    tool_input: { command },
  };
}
