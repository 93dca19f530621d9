/**
 * What a discovered hook is: its manifest, where it lives, and how it runs.
 *
 * @module
 */
import type { Manifest } from "../schema/manifest.ts";

/** Discovery level, in tie-break order (SPEC §4.2). */
export type HookLevel = "platform" | "user" | "project" | "tenant";

/** Source formats compiled to WebAssembly before running. */
export type WasmFormat = "wasm" | "js" | "as";

/** How a hook runs, resolved from the files in its folder (SPEC §2). */
export type HookEntry =
  | { runtime: "wasm"; format: WasmFormat; path: string }
  | { runtime: "subprocess"; path: string; command: string[] }
  | { runtime: "prompt" };

/** A hook found on disk, validated and ready to dispatch. */
export interface HookDefinition {
  /** The hook's name (from HOOK.md). */
  name: string;
  /** Where it was installed. */
  level: HookLevel;
  /** Absolute path of the hook folder. */
  dir: string;
  /** Its validated frontmatter. */
  manifest: Manifest;
  /** Markdown body of HOOK.md (the message of a prompt hook). */
  body: string;
  /** What runs it. */
  entry: HookEntry;
  /**
   * A project hook only: the folder of the user hook of the same name it
   * replaces (SPEC §2), which does not run for this project.
   */
  replaces?: string;
}
