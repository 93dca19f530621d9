/**
 * How each real agent CLI is driven headless against the scripted model
 * server (research/real-agents.md): its private HOME and config, its
 * command line and environment, and how its model calls a shell command.
 *
 * @module
 */
import type { InstallableAgent } from "../../../packages/agents/install.ts";
import type { Step } from "./_model.ts";

/** One agent as the suite drives it. */
export interface Driver {
  /** hookbox's name for it (`install --agent`). */
  agent: InstallableAgent;
  /** The npm executable (see `_agents.ts`). */
  bin: "claude" | "gemini" | "codex" | "copilot";
  /** Where hookbox installs in the project. */
  config: string;
  /** Writes the agent's user config into `home` for a model server at `url`. */
  setup(home: string, url: string, project: string): Promise<void>;
  /** The command-line arguments of one headless run with `prompt`. */
  args(prompt: string): string[];
  /** The environment besides PATH, HOME and hookbox's (for a model server at `url`). */
  env(url: string): Record<string, string>;
  /**
   * A string argument of the shell tool the model may fill at will (padding),
   * and whether the agent hands it to hooks (Codex's hook payload holds the
   * command alone).
   */
  padField: string;
  padReachesHooks: boolean;
  /** The model's call of the agent's shell tool running `command`. */
  shell(command: string): Step;
  /** The final answer of a run (from its stdout), when the agent prints one. */
  answer(stdout: string): string;
}

export const DRIVERS: Driver[] = [
  {
    agent: "claude-code",
    bin: "claude",
    config: ".claude/settings.json",
    setup: () => Promise.resolve(),
    args: (
      prompt,
    ) => ["-p", prompt, "--output-format", "json", "--permission-mode", "bypassPermissions"],
    env: (url) => ({
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: "sk-hookbox-test",
      IS_SANDBOX: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
    }),
    padField: "description",
    padReachesHooks: true,
    shell: (command) => ({ tool: "Bash", input: { command, description: "run it" } }),
    answer: (stdout) => JSON.parse(stdout).result,
  },
  {
    agent: "gemini-cli",
    bin: "gemini",
    config: ".gemini/settings.json",
    async setup(home) {
      // The base URL alone selects an auth type headless mode refuses.
      await Deno.mkdir(`${home}/.gemini`, { recursive: true });
      await Deno.writeTextFile(
        `${home}/.gemini/settings.json`,
        JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }),
      );
    },
    args: (prompt) => ["-m", "gemini-2.5-flash", "--yolo", "-p", prompt],
    env: (url) => ({
      GOOGLE_GEMINI_BASE_URL: url,
      GEMINI_API_KEY: "hookbox-test",
      // Project hooks load only in a trusted workspace (--skip-trust drops them).
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    }),
    padField: "description",
    padReachesHooks: true,
    shell: (command) => ({ tool: "run_shell_command", input: { command } }),
    answer: (stdout) => stdout.trim(),
  },
  {
    agent: "codex",
    bin: "codex",
    config: ".codex/hooks.json",
    async setup(home, url, project) {
      await Deno.mkdir(`${home}/.codex`, { recursive: true });
      await Deno.writeTextFile(
        `${home}/.codex/config.toml`,
        [
          'model = "gpt-5"',
          'model_provider = "fake"',
          'approval_policy = "never"',
          'sandbox_mode = "danger-full-access"',
          "[model_providers.fake]",
          'name = "fake"',
          `base_url = "${url}/v1"`,
          'wire_api = "responses"',
          'env_key = "HOOKBOX_TEST_KEY"',
          `[projects."${project}"]`,
          'trust_level = "trusted"',
          "",
        ].join("\n"),
      );
    },
    // Hooks are trusted by hash in Codex's TUI; a headless run takes them with this flag.
    args: (prompt) => ["exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", prompt],
    env: () => ({ HOOKBOX_TEST_KEY: "hookbox-test" }),
    padField: "justification",
    padReachesHooks: false,
    shell: (command) => ({ tool: "exec_command", input: { cmd: command } }),
    answer: (stdout) => stdout.trim(),
  },
  {
    agent: "copilot",
    bin: "copilot",
    config: ".github/hooks/hookbox.json",
    setup: () => Promise.resolve(),
    // Copilot loads .github/hooks only for a trusted folder.
    args: (prompt) => ["-p", prompt, "--allow-all-tools", "--trust-folder"],
    env: (url) => ({
      COPILOT_PROVIDER_BASE_URL: `${url}/v1`,
      COPILOT_MODEL: "gpt-4.1",
      COPILOT_PROVIDER_API_KEY: "hookbox-test",
    }),
    padField: "description",
    padReachesHooks: true,
    shell: (command) => ({ tool: "bash", input: { command, description: "run it" } }),
    answer: (stdout) => stdout.trim(),
  },
];
