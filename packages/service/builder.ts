/**
 * How the service turns an uploaded hook folder into what it stores: the
 * manifest, the body, and (for WebAssembly hooks) the plugin bytes, compiled
 * from JS/TS/AssemblyScript when needed. The service gets a builder as a
 * parameter; the Deno one (`packages/deno/serve/hook_builder.ts`) uses the
 * file-system compilers in a temporary folder.
 *
 * @module
 */
import type { ErrorCode } from "../core/errors.ts";
import type { Manifest } from "../core/schema/manifest.ts";

/** One thing wrong with an uploaded hook (SPEC §6 `problems`). */
export interface Problem {
  code: ErrorCode;
  path: string | null;
  field: string | null;
  message: string;
}

/** Thrown by a builder for a hook it refuses; the API answers `422 HOOK_REJECTED`. */
export class HookRejected extends Error {
  constructor(readonly problems: Problem[]) {
    super(problems.map((p) => p.message).join("; "));
    this.name = "HookRejected";
  }
}

/** What an upload built. */
export interface BuiltHook {
  /** The validated frontmatter. */
  manifest: Manifest;
  /** The Markdown body of HOOK.md. */
  body: string;
  /** The runtime that runs the built hook. */
  runtime: "wasm" | "prompt";
  /** The plugin that runs (null for a prompt hook). */
  plugin: Uint8Array | null;
  /** What the plugin came from: `wasm`, `js`, `as`, or `prompt`. */
  builtFrom: "wasm" | "js" | "as" | "prompt";
}

/** Builds uploaded hook folders. */
export interface HookBuilder {
  /**
   * Validates and builds the folder `files` (relative path → bytes) for the
   * hook `name`; throws {@linkcode HookRejected} listing every problem found.
   */
  build(name: string, files: ReadonlyMap<string, Uint8Array>): Promise<BuiltHook>;
  /**
   * Unpacks an uploaded gzip'd tar as `unpackArchive` does, somewhere other
   * than the thread that answers events (a worker); absent: the service
   * unpacks it itself. The service does not read `archive` afterwards: it may
   * be moved.
   */
  unpack?(archive: Uint8Array): Promise<Map<string, Uint8Array>>;
  /**
   * Reads a big JSON upload body as `uploadFiles` does, somewhere other than
   * the thread answering requests (the service does not read `json`
   * afterwards: it may be moved). @default none: the service reads it itself
   */
  parseUpload?(json: Uint8Array): Promise<Map<string, Uint8Array>>;
  /**
   * Lowercase hex SHA-256 of uploaded or built bytes (up to 64 MiB), without
   * holding the thread that answers events for long. @default `sha256Hex`
   */
  sha256?(bytes: Uint8Array): Promise<string>;
  /**
   * Runs the folder's own tests (`tests/*.json`) through the sandbox, as
   * `hookbox test` does, and reports each case; absent: the service cannot
   * test versions (`POST /v1/hooks/{name}/versions/{version}/test` answers 501).
   */
  test?(name: string, files: ReadonlyMap<string, Uint8Array>): Promise<HookTestReport>;
}

/** What a hook's own tests came to. */
export interface HookTestReport {
  /** Each case: its file, whether it passed, and what differed. */
  cases: { file: string; passed: boolean; failures: string[] }[];
}
