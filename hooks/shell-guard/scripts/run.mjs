/**
 * shell-guard (pre-tool-call): blocks dangerous shell commands found in
 * `tool_input.command` / `cmd` / `script` (a string, or an argv array).
 * Exit 2 with the rule id on stderr; otherwise exit 0 and no output.
 * Quoted text is data: `echo "rm -rf /"` is allowed, while `bash -c "..."`,
 * `eval`, here-documents fed to a shell and `$(...)` are read and checked.
 */
import { block, hookFunction, invalid } from "hookbox:lib/hook_io.js";
import { readShell } from "hookbox:lib/shell_words.js";
import { effectiveArgv } from "./commands.js";
import { CONFIG, RULES } from "./rules.js";

const MAX_DEPTH = 6;
/**
 * Longest command text this guard checks. Longer ones are blocked: a command
 * that cannot be checked within the guard's fuel must not be let through.
 */
const MAX_COMMAND_CHARS = 4096;
const FIELDS = ["command", "cmd", "script"];
/** The fields of `tool_input` a shell tool's own working folder may be in (Gemini CLI's `dir_path`). */
const DIR_FIELDS = ["dir_path", "workdir", "directory", "cwd"];

/** Quotes one argv word for the shell reader. */
function quote(word) {
  return "'" + String(word).replace(/'/g, "'\\''") + "'";
}

/** The command texts in `tool_input`. */
function commandTexts(input) {
  if (typeof input === "string") return [input];
  if (input === null || typeof input !== "object") return [];
  const texts = [];
  for (const field of FIELDS) {
    const value = input[field];
    if (value === undefined || value === null) continue;
    if (typeof value === "string") texts.push(value);
    else if (Array.isArray(value) && value.every((w) => typeof w === "string")) {
      texts.push(value.map(quote).join(" "));
    } else invalid("tool_input." + field + " must be a string or an array of strings");
  }
  return texts;
}

/**
 * The folder the command starts in, or null when unknown: the tool's own
 * (`tool_input.dir_path`, ...; a relative one from the event's), else the
 * event's `work_dir` (the agent's working folder; Codex gives a call's
 * `workdir` there). A relative path in the command is read from it, so that
 * `rm -rf *` run in `/` or in a home directory is `rm -rf /` or `rm -rf ~`.
 */
function startDir(event) {
  const base = typeof event.work_dir === "string" && event.work_dir.startsWith("/")
    ? event.work_dir
    : null;
  const input = event.tool_input;
  if (input === null || typeof input !== "object" || Array.isArray(input)) return base;
  for (const field of DIR_FIELDS) {
    const value = input[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string") invalid("tool_input." + field + " must be a string");
    if (value === "") continue;
    if (base === null || /^(?:\/|~)/.test(value)) return value;
    return base + "/" + value;
  }
  return base;
}

/** Scripts a command hands to a shell: `sh -c TEXT`, `eval TEXT`, `bash <<EOF`. */
function innerScripts(argv, redirects) {
  if (argv[0] === "eval") return [argv.slice(1).join(" ")];
  if (!CONFIG.shells.includes(argv[0])) return [];
  const scripts = redirects.filter((r) => /^<<[-<]?$/.test(r.op)).map((r) => r.body || r.target);
  for (let i = 1; i < argv.length && /^[-+]/.test(argv[i]); i++) {
    // An option cluster holding c (two tests: one regex for both backtracks
    // over a long cluster, quadratic in the engine's fuel).
    if (/^-[a-zA-Z]*$/.test(argv[i]) && argv[i].includes("c") && argv[i + 1] !== undefined) {
      scripts.push(argv[i + 1]);
    }
    if (argv[i] === "-o" || argv[i] === "+o") i++;
  }
  return scripts;
}

function brief(text) {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 160 ? line.slice(0, 157) + "..." : line;
}

function describe({ argv, redirects }) {
  return argv.concat(redirects.map((r) => r.op + " " + r.target)).join(" ");
}

function hit(rule, evidence) {
  return { rule, evidence: brief(evidence) };
}

/**
 * The working folder after `argv` runs in `cwd` (null: unknown): `cd` or
 * `pushd` to an absolute or home path, or relative to a known one.
 */
function nextCwd(argv, cwd) {
  if (argv[0] !== "cd" && argv[0] !== "pushd") return cwd;
  const target = argv.slice(1).find((a) => !a.startsWith("-") || a === "-") ?? "~";
  if (target === "-") return null;
  if (/^(?:\/|~|\$HOME|\$\{HOME)/.test(target)) return target;
  return cwd === null ? null : cwd + "/" + target;
}

/** The first rule the pipeline `commands` (run as `argvs`) breaks, or null. */
function checkPipeline(commands, raw, argvs, depth, cwd, vars) {
  for (const rule of RULES) {
    if (
      (rule.pipeline && rule.pipeline(argvs, raw, cwd)) ||
      (rule.session && rule.session(argvs, commands))
    ) {
      return hit(
        rule,
        argvs.map((a) => a.join(" ")).join(" | "),
      );
    }
  }
  for (let k = 0; k < commands.length; k++) {
    const command = { argv: argvs[k], redirects: commands[k].redirects, cwd };
    for (const rule of RULES) {
      if (rule.command && rule.command(command)) return hit(rule, describe(command));
    }
    for (const rule of WORD_RULES) {
      if (rule.words(raw[k])) return hit(rule, raw[k].join(" "));
    }
    const scripts = innerScripts(command.argv, command.redirects);
    const data = dataScripts(raw[k]);
    for (const script of data === null ? scripts : scripts.concat(data)) {
      const found = inspect(script, depth - 1, cwd, vars);
      if (found) return found;
    }
  }
  return null;
}

/**
 * Text in `words` (a command's words, quotes removed) that bash may run although it was quoted
 * data: a command substitution in an assignment's value (`X='$(cmd)'`, run when the value is
 * expanded as a prompt or evaluated as arithmetic with it in a subscript) and in a subscripted
 * name (`'a[$(cmd)]'`, which `test -v`, `printf -v`, `read`, `unset`, `let` and `declare`
 * evaluate); null when there is none.
 */
function dataScripts(words) {
  let scripts = null;
  for (const word of words) {
    if (!SUBSTITUTION.test(word)) continue;
    const value = ASSIGNED_VALUE.exec(word)?.[1];
    if (value !== undefined && SUBSTITUTION.test(value)) (scripts ??= []).push(value);
    const subscript = subscriptOf(word);
    if (subscript !== undefined) (scripts ??= []).push(subscript);
  }
  return scripts;
}
/** The rules that read a command's words as written. */
const WORD_RULES = RULES.filter((rule) => rule.words);
/** The value of an assignment word: `X=v`, `X+=v`, `a[i]=v` (also as `declare`'s arguments). */
const ASSIGNED_VALUE = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=([\s\S]*)$/;
/**
 * The subscript of a variable name in `word` (`a[...]`) when it holds a command substitution, or
 * undefined. The first `[` after a name character to the last `]` holds every later one, so one
 * look (linear in the word) answers for all.
 */
function subscriptOf(word) {
  let at = word.indexOf("[");
  while (at === 0 || (at > 0 && !/[A-Za-z0-9_]/.test(word[at - 1]))) at = word.indexOf("[", at + 1);
  if (at < 0) return undefined;
  const end = word.lastIndexOf("]");
  if (end <= at) return undefined;
  const inner = word.slice(at + 1, end);
  return SUBSTITUTION.test(inner) ? inner : undefined;
}
/** A command substitution (or process substitution) in a word's text. */
const SUBSTITUTION = /\$\(|`|[<>]\(/;

const VARIABLE = /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g;
const ASSIGNED = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;

/** `word` with `$NAME` and `${NAME}` replaced where an assignment before set NAME. */
function expandVars(word, vars) {
  if (vars.size === 0 || !word.includes("$")) return word;
  return word.replace(VARIABLE, (m, braced, bare) => vars.get(braced ?? bare) ?? m);
}

/**
 * The variables after the lone command `raw` (words) runs: `X=/` or
 * `export X=/` on its own sets X for the commands after (not `X=/ cmd`,
 * whose `$X` the shell expands before X is set).
 */
function nextVars(raw, argv, vars) {
  const words = raw[0] === "export" || raw[0] === "readonly" ? raw.slice(1) : raw;
  if (argv.length > 0 && words === raw) return vars;
  let out = vars;
  for (const word of words) {
    const assigned = ASSIGNED.exec(word);
    if (assigned === null) continue;
    out = new Map(out);
    out.set(assigned[1], assigned[2]);
  }
  return out;
}

/**
 * The first rule `text` breaks, with the offending command, or null. `cwd`
 * is the working folder it starts in when known (the event's, or a `cd`
 * before it said; else null),
 * `vars` the variables assignments before it set; a `cd` or an assignment on
 * its own in `text` changes them for the commands after.
 */
function inspect(text, depth, cwd = null, vars = new Map()) {
  for (const rule of RULES) if (rule.text && rule.text(text)) return hit(rule, text);
  const { pipelines, tooDeep } = readShell(text, MAX_DEPTH);
  if (tooDeep || depth <= 0) {
    return hit({ id: "too-deep", about: "nested too deeply to check" }, text);
  }
  for (const commands of pipelines) {
    const raw = commands.map((c) => c.argv.map((w) => expandVars(w, vars)));
    const argvs = raw.map(effectiveArgv);
    const found = checkPipeline(commands, raw, argvs, depth, cwd, vars);
    if (found) return found;
    if (argvs.length === 1) {
      cwd = nextCwd(argvs[0], cwd);
      vars = nextVars(raw[0], argvs[0], vars);
    }
  }
  return null;
}

export default hookFunction("shell-guard", (event) => {
  const texts = commandTexts(event.tool_input);
  const cwd = texts.length > 0 ? startDir(event) : null;
  for (const text of texts) {
    if (text.length > MAX_COMMAND_CHARS) {
      return block(
        `shell-guard: command is ${text.length} characters, over the ${MAX_COMMAND_CHARS} this guard checks`,
      );
    }
    const found = inspect(text, MAX_DEPTH, cwd);
    if (found) {
      return block(
        `shell-guard: blocked by rule "${found.rule.id}" (${found.rule.about}): ${found.evidence}`,
      );
    }
  }
});
