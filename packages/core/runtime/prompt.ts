/**
 * Prompt hooks (seed 003): nothing runs; the HOOK.md body becomes a message the
 * agent receives through `inject`.
 *
 * @module
 */
import { runFailure } from "./failure.ts";
import type { RunRequest, RunResult, Runtime } from "./types.ts";

/** The prompt runtime: answers with an `inject` control object. */
export function createPromptRuntime(): Runtime {
  return {
    kind: "prompt",
    run(request: RunRequest): Promise<RunResult> {
      const inject = request.hook.manifest.inject;
      if (!inject) {
        return Promise.resolve({
          exitCode: null,
          stdout: "",
          stderr: "",
          failure: runFailure("PROMPT_INVALID", "no inject settings"),
        });
      }
      const message = {
        role: inject.role,
        content: request.hook.body,
        persistent: inject.persistent,
        scope: inject.scope,
      };
      return Promise.resolve({
        exitCode: 0,
        stdout: JSON.stringify({ inject: [message] }),
        stderr: "",
      });
    },
  };
}
