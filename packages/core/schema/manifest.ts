/**
 * HOOK.md frontmatter schema (SPEC §2). Ranges and defaults live here and
 * nowhere else.
 *
 * @module
 */
import { z } from "zod";
import { type EventType, eventTypeSchema } from "./event_types.ts";
import { compileMatcher, MAX_MATCHER_CHARS } from "./matcher.ts";
import { estimateProgram, MAX_MATCHER_INSTRUCTIONS } from "./_matcher_size.ts";

/** Default per-call limits when neither HOOK.md nor the policy says otherwise. */
export const DEFAULT_LIMITS = {
  memory_mb: 64,
  fuel: 200_000_000,
  output_kb: 1024,
} as const;

function buildManifestSchema() {
  /**
   * A matcher regex in RE2 syntax: matched in linear time on the host (no
   * backtracking, so no pattern can stall discovery or dispatch). RE2 has no
   * lookaround or backreferences; such patterns are refused here.
   */
  const regex = z.string().max(MAX_MATCHER_CHARS).superRefine((value, ctx) => {
    // Refused before it compiles when its text already says it is too big (`_matcher_size.ts`).
    const tooBig = (instructions: number) =>
      ctx.addIssue({
        code: "custom",
        message: `too big: RE2 writes this pattern out to about ${instructions} instructions, ` +
          `at most ${MAX_MATCHER_INSTRUCTIONS} (a counted repetition is one copy per count, ` +
          `two per optional one: write [abc]{1,990} rather than (a|b|c){1,990}, or use + or *)`,
      });
    const estimate = estimateProgram(value);
    if (estimate > MAX_MATCHER_INSTRUCTIONS) return tooBig(estimate);
    try {
      const { instructions } = compileMatcher(value);
      if (instructions > MAX_MATCHER_INSTRUCTIONS) tooBig(instructions);
    } catch (err) {
      ctx.addIssue({
        code: "custom",
        message: `not a valid RE2 regular expression: ${(err as Error).message}`,
      });
    }
  });

  const limitsSchema = z.strictObject({
    memory_mb: z.number().int().min(1).max(4096).default(DEFAULT_LIMITS.memory_mb),
    fuel: z.number().int().min(1000).max(1e12).default(DEFAULT_LIMITS.fuel),
    output_kb: z.number().int().min(1).max(65536).default(DEFAULT_LIMITS.output_kb),
  });

  const injectSchema = z.strictObject({
    role: z.enum(["system", "user", "assistant"]).default("system"),
    persistent: z.boolean().default(false),
    scope: z.enum(["turn", "session"]).default("turn"),
  });

  return z.strictObject({
    name: z.string().regex(/^[a-z0-9-]+$/, "must match [a-z0-9-]+").max(64),
    description: z.string().min(1),
    // One event or a list of them; each is checked on its own, so a misspelt one is named
    // with the events there are (a union would only say "Invalid input").
    trigger: z.unknown().transform((value, ctx) => {
      const list = typeof value === "string" ? [value] : value;
      if (!Array.isArray(list) || list.length === 0) {
        ctx.addIssue({ code: "custom", message: "must be an event type or a list of them" });
        return z.NEVER;
      }
      const types: EventType[] = [];
      for (const [i, item] of list.entries()) {
        const parsed = eventTypeSchema().safeParse(item);
        if (!parsed.success) {
          const message = typeof item === "string"
            ? parsed.error.issues[0]!.message
            : `must be an event type, not ${JSON.stringify(item)}`;
          ctx.addIssue({ code: "custom", message, path: typeof value === "string" ? [] : [i] });
          return z.NEVER;
        }
        types.push(parsed.data);
      }
      return [...new Set(types)];
    }),
    matcher: z.strictObject({ tool: regex.optional(), pattern: regex.optional() }, {
      error: (issue) =>
        issue.code === "invalid_type"
          ? 'must be a mapping of regular expressions: {tool: "^Bash$", pattern: "rm -rf"} ' +
            '(what Claude Code writes as matcher "Bash" is tool: "^Bash$")'
          : undefined,
    }).optional(),
    timeout: z.number().int().min(100).max(600_000).default(30_000),
    async: z.boolean().default(false),
    priority: z.number().int().min(0).max(1000).default(100),
    on_error: z.enum(["open", "closed"]).default("open"),
    limits: limitsSchema.default(() => ({ ...DEFAULT_LIMITS })),
    /** [ext] pin of the plugin's SHA-256 (hex), `sha256:` prefix optional. */
    sha256: z.string().regex(/^(sha256:)?[0-9a-f]{64}$/, "must be 64 lowercase hex digits")
      .transform((s) => s.replace(/^sha256:/, "")).optional(),
    /** [ext] hosts the plugin may reach through Extism HTTP; default none. */
    allowed_hosts: z.array(z.string().min(1)).default([]),
    /** [ext] `fresh` instance per call (default) or a `warm` instance reset between calls. */
    isolation: z.enum(["fresh", "warm"]).default("fresh"),
    /** [ext] names of `HOOKBOX_*` variables a WebAssembly hook may read. */
    env: z.array(z.string().regex(/^[A-Z_][A-Z0-9_]*$/)).default([]),
    /** [ext] prompt hook (seed 003): the Markdown body is injected as a message. */
    inject: injectSchema.optional(),
  });
}

let built: ReturnType<typeof buildManifestSchema> | null = null;

/**
 * The frontmatter of a HOOK.md, validated, with defaults filled in. Unknown
 * top-level fields are refused (a typo such as `timout` must not be silently
 * ignored, and nothing unbounded rides along).
 *
 * Built at its first use: a process whose discovery comes from the scan
 * cache never builds it.
 */
export function manifestSchema(): ReturnType<typeof buildManifestSchema> {
  return built ??= buildManifestSchema();
}

/** Per-hook limits as written in HOOK.md (after defaults). */
export interface ManifestLimits {
  /** Linear memory cap, MiB. */
  memory_mb: number;
  /** Fuel (metered instructions) per call. */
  fuel: number;
  /** stdout + stderr cap, KiB. */
  output_kb: number;
}

/** Parsed HOOK.md frontmatter (SPEC §2), defaults filled in. */
export interface Manifest {
  /** Hook name, `[a-z0-9-]+`. */
  name: string;
  /** What the hook does. */
  description: string;
  /** The events it runs on. */
  trigger: EventType[];
  /** RE2 patterns on the tool name and on the event's text. */
  matcher?: { tool?: string | undefined; pattern?: string | undefined } | undefined;
  /** Wall-clock limit per call, ms. */
  timeout: number;
  /** Runs detached: the answer does not wait for it. */
  async: boolean;
  /** Higher runs first. */
  priority: number;
  /** Whether a failure blocks (`closed`) or is ignored (`open`). */
  on_error: "open" | "closed";
  /** Per-call limits. */
  limits: ManifestLimits;
  /** Pinned SHA-256 (hex) of the plugin. */
  sha256?: string | undefined;
  /** Hosts the plugin may reach through Extism HTTP. */
  allowed_hosts: string[];
  /** A fresh instance per call, or a warm one reset between calls. */
  isolation: "fresh" | "warm";
  /** `HOOKBOX_*` variables a WebAssembly hook may read. */
  env: string[];
  /** Prompt hook (seed 003): how its body is injected. */
  inject?: {
    role: "system" | "user" | "assistant";
    persistent: boolean;
    scope: "turn" | "session";
  } | undefined;
}

// The interfaces above are the schema's output, checked both ways.
type Parsed = z.infer<ReturnType<typeof manifestSchema>>;
const _manifestMatches: [Parsed, Manifest] extends [Manifest, Parsed] ? true : never = true;
