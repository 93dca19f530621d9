// deno-fmt-ignore-file -- AssemblyScript source.
// deno-lint-ignore-file verbatim-module-syntax -- AssemblyScript has no `import type`.
/**
 * shell-guard-as: blocks dangerous shell commands before a Shell/Bash tool
 * runs them. Exit 2 with the reason on stderr, or exit 0 with no output.
 */

import { ALLOW, block, input, json } from "hookbox";
import { isAssignment, splitCommands, SimpleCommand } from "hookbox/shell";

const SHELLS = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];
/** The fields of `tool_input` a shell tool's command may be in: a string or an argv array. */
const FIELDS = ["command", "cmd", "script"];
/** The fields of `tool_input` a shell tool's own working folder may be in (Gemini CLI's `dir_path`). */
const DIR_FIELDS = ["dir_path", "workdir", "directory", "cwd"];
/** Folders whose every subfolder is a user's home directory. */
const HOME_PARENTS = ["home", "Users"];
/** Scripts inside scripts (`sh -c`, `eval`) deeper than this are blocked, not let through. */
const MAX_DEPTH = 6;
const DISKS = ["/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/disk"];
/** Most words a brace expression may stand for; past it the path counts as root or home. */
const MAX_EXPANSIONS = 256;
/**
 * Most brace alternatives made for one command (the guard reads commands up
 * to the 1 MiB event cap): past it, paths count as root or home, so that a
 * command full of braces is blocked by the rule instead of running the guard
 * out of fuel.
 */
const MAX_TOTAL_EXPANSIONS = 65536;
let expansionsLeft: i32 = MAX_TOTAL_EXPANSIONS;

export function hook(): i32 {
  expansionsLeft = MAX_TOTAL_EXPANSIONS; // a warm instance keeps globals between calls
  const text = input.text();
  const cwd = startDir(text);
  if (cwd === null) return block("shell-guard: tool_input's working folder must be a string");
  for (let f = 0; f < FIELDS.length; f++) {
    const path = ["tool_input", FIELDS[f]];
    const raw = json.getRaw(text, path);
    if (raw === null || raw == "null") continue;
    let command = json.getString(text, path);
    if (command === null) {
      const words = json.getStrings(text, path);
      if (words === null) return block("shell-guard: tool_input." + FIELDS[f] + " must be a string or an array of strings");
      command = quoteWords(words);
    }
    const reason = checkLine(command, 0, cwd, new Map<string, string>());
    if (reason.length > 0) return block("shell-guard: " + reason);
  }
  return ALLOW;
}

/**
 * The folder the command starts in ("" when unknown; null when a field is not a string): the
 * tool's own (`tool_input.dir_path`, ...; a relative one from the event's), else the event's
 * `work_dir` (Codex gives a call's `workdir` there), so that `rm -rf *` in `/` is `rm -rf /`.
 */
function startDir(text: string): string | null {
  const work = json.getString(text, ["work_dir"]);
  const base = work !== null && work.startsWith("/") ? work : "";
  for (let f = 0; f < DIR_FIELDS.length; f++) {
    const path = ["tool_input", DIR_FIELDS[f]];
    const raw = json.getRaw(text, path);
    if (raw === null || raw == "null") continue;
    const dir = json.getString(text, path);
    if (dir === null) return null;
    if (dir.length == 0) continue;
    if (base.length == 0 || dir.startsWith("/") || dir.startsWith("~")) return dir;
    return base + "/" + dir;
  }
  return base;
}

/** An argv array as one command line, each word single-quoted. */
function quoteWords(words: string[]): string {
  const quoted: string[] = [];
  for (let i = 0; i < words.length; i++) quoted.push("'" + words[i].replaceAll("'", "'\\''") + "'");
  return quoted.join(" ");
}

/**
 * Why `line` is dangerous, or "". `sh -c "..."` and `eval ...` are checked
 * recursively. `cwd` is the working folder (the event's, or where a `cd`
 * before moved to; "" when unknown); `vars` holds the variables assignments on their own set (`X=/; rm -rf $X`).
 */
function checkLine(line: string, depth: i32, cwd: string, vars: Map<string, string>): string {
  if (isForkBomb(line)) return "fork bomb";
  const commands = splitCommands(line);
  for (let i = 0; i < commands.length; i++) {
    const argv = commands[i].argv;
    for (let k = 0; k < argv.length; k++) argv[k] = expandVars(argv[k], vars);
    let reason = check(commands, i, cwd);
    if (reason.length == 0) {
      const script = innerScript(commands[i].argv);
      if (script !== null) {
        reason = depth >= MAX_DEPTH ? "nested too deeply to check" : checkLine(script, depth + 1, cwd, vars);
      }
    }
    if (reason.length > 0) return reason;
    cwd = nextCwd(argv, cwd);
    setVars(commands[i], vars);
  }
  return "";
}

/**
 * Records what the command sets: `X=/` on its own, or `export`/`readonly
 * X=/` (not `X=/ cmd`, whose `$X` the shell expands before X is set).
 */
function setVars(command: SimpleCommand, vars: Map<string, string>): void {
  const argv = command.argv;
  let words: string[] = [];
  if (argv.length == 0) words = command.assignments;
  else if (argv[0] == "export" || argv[0] == "readonly") words = argv.slice(1);
  for (let k = 0; k < words.length; k++) {
    if (!isAssignment(words[k])) continue;
    const eq = words[k].indexOf("=");
    vars.set(words[k].substring(0, eq), expandVars(words[k].substring(eq + 1), vars));
  }
}

/** `word` with `$NAME` and `${NAME}` replaced where an assignment before set NAME. */
function expandVars(word: string, vars: Map<string, string>): string {
  if (vars.size == 0 || !word.includes("$")) return word;
  const pieces: string[] = [];
  let run = 0;
  for (let i = 0; i < word.length; i++) {
    if (word.charCodeAt(i) != 0x24) continue;
    let j = i + 1;
    const braced = j < word.length && word.charCodeAt(j) == 0x7b;
    if (braced) j++;
    const start = j;
    while (j < word.length && isNameChar(word.charCodeAt(j))) j++;
    if (j == start || (braced && (j >= word.length || word.charCodeAt(j) != 0x7d))) continue;
    const name = word.substring(start, j);
    if (!vars.has(name)) continue;
    pieces.push(word.substring(run, i));
    pieces.push(vars.get(name));
    run = braced ? j + 1 : j;
    i = run - 1;
  }
  pieces.push(word.substring(run));
  return pieces.join("");
}

/** The folder after `argv` runs in `cwd`: `cd`/`pushd` to an absolute or home path, or from a known one. */
function nextCwd(argv: string[], cwd: string): string {
  if (argv.length == 0 || (argv[0] != "cd" && argv[0] != "pushd")) return cwd;
  let target = "~";
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] == "-") return "";
    if (!argv[i].startsWith("-")) {
      target = argv[i];
      break;
    }
  }
  if (target.startsWith("/") || target.startsWith("~") || target.startsWith("$HOME") || target.startsWith("${HOME")) return target;
  return cwd.length == 0 ? "" : cwd + "/" + target;
}

/** The script a command hands to a shell (`bash -ec TEXT`, `eval TEXT`), or null. */
function innerScript(argv: string[]): string | null {
  if (argv.length < 2) return null;
  if (argv[0] == "eval") return argv.slice(1).join(" ");
  if (!SHELLS.includes(argv[0])) return null;
  for (let i = 1; i + 1 < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("-") && !arg.startsWith("+")) return null;
    if (arg == "-o" || arg == "+o") i++;
    else if (isClusterWithC(arg)) return argv[i + 1];
  }
  return null;
}

/** `-c`, `-ec`, `-xce`: short options, one of them `c`. */
function isClusterWithC(arg: string): bool {
  if (arg.length < 2 || arg.charCodeAt(0) != 0x2d) return false;
  let c = false;
  for (let i = 1; i < arg.length; i++) {
    const ch = arg.charCodeAt(i);
    if (!((ch >= 0x41 && ch <= 0x5a) || (ch >= 0x61 && ch <= 0x7a))) return false;
    if (ch == 0x63) c = true;
  }
  return c;
}

function check(commands: SimpleCommand[], i: i32, cwd: string): string {
  const argv = commands[i].argv;
  if (argv.length == 0) return "";
  const name = argv[0];
  if (name == "rm" && isRootWipe(argv, cwd)) return "recursive forced delete of / or ~ (" + argv.join(" ") + ")";
  if (name == "rm" && commands[i].wrappers.includes("xargs") && commands[i].pipedFrom >= 0 &&
      isRootWipe(argv.concat(handedOn(commands[commands[i].pipedFrom].argv)), cwd)) {
    return "recursive forced delete of / or ~ (xargs " + argv.join(" ") + ")";
  }
  if (name.startsWith("mkfs")) return "creating a filesystem (" + name + ") is not allowed";
  if (name == "dd" && writesDisk(argv)) return "dd writing to a disk device is not allowed";
  if (SHELLS.includes(name) && commands[i].pipedFrom >= 0) {
    const source = commands[commands[i].pipedFrom].argv;
    if (source.length > 0 && (source[0] == "curl" || source[0] == "wget")) {
      return "piping a download (" + source[0] + ") into a shell (" + name + ") is not allowed";
    }
  }
  return "";
}

function isRootWipe(argv: string[], cwd: string): bool {
  let recursive = false, force = false, root = false, operands = false;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i];
    if (!operands && arg == "--") operands = true;
    else if (!operands && arg == "--recursive") recursive = true;
    else if (!operands && arg == "--force") force = true;
    else if (!operands && arg.startsWith("-") && !arg.startsWith("--")) {
      if (arg.includes("r") || arg.includes("R")) recursive = true;
      if (arg.includes("f")) force = true;
    } else if (isRootOrHome(arg, cwd)) root = true;
  }
  return recursive && force && root;
}

/**
 * The paths `argv` hands on through a pipe: `echo`'s and `printf`'s words (a
 * `\n` escape separates them), the folders `ls` lists and `find` walks (the
 * working folder when none is named); none for other programs.
 */
function handedOn(argv: string[]): string[] {
  const out: string[] = [];
  if (argv.length == 0) return out;
  const name = argv[0];
  const printing = name == "echo" || name == "printf";
  if (!printing && name != "ls" && name != "find") return out;
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i];
    if (word.startsWith("-") || word.startsWith("(") || word.startsWith("!")) {
      if (name == "find" && word != "-H" && word != "-L" && word != "-P") break; // its expression
      continue;
    }
    const parts = printing ? word.replaceAll("\\n", " ").replaceAll("\\t", " ").split(" ") : [word];
    for (let k = 0; k < parts.length; k++) if (parts[k].length > 0) out.push(parts[k]);
  }
  if (!printing && out.length == 0) out.push(".");
  return out;
}

/**
 * True when `word` may name `/`, the home directory or a folder above it or
 * above the working one, read as the shell expands it: `.` and `..` resolved
 * (`/usr/..`), a glob standing for its whole folder (`/*`, `/[a-z]*`), every
 * brace alternative (`{/,}`), `$HOME`/`${HOME...}` and `${NAME:-word}`'s word,
 * and a relative path taken from a `cd` before it.
 */
function isRootOrHome(word: string, cwd: string): bool {
  const words = expandBraces(word);
  for (let i = 0; i < words.length; i++) {
    if (rootPath(words[i], cwd) || (cwd.length > 0 && rootPath(words[i], ""))) return true;
    const fallback = parameterDefault(words[i]);
    if (fallback !== null && (rootPath(fallback, cwd) || (cwd.length > 0 && rootPath(fallback, "")))) return true;
  }
  return false;
}

/** `word` with its `{a,b}` alternatives expanded, innermost first; past MAX_EXPANSIONS, ["/"]. */
function expandBraces(word: string): string[] {
  let words: string[] = [word];
  for (let round = 0; round <= MAX_EXPANSIONS; round++) {
    const next: string[] = [];
    let changed = false;
    for (let k = 0; k < words.length; k++) {
      const w = words[k];
      let close = w.indexOf("}"), open = -1;
      while (close >= 0) {
        open = w.lastIndexOf("{", close);
        if (open >= 0 && w.substring(open + 1, close).includes(",") && !(open > 0 && w.charCodeAt(open - 1) == 0x24)) break;
        open = -1;
        close = w.indexOf("}", close + 1);
      }
      if (open < 0) {
        next.push(w);
        continue;
      }
      changed = true;
      const parts = w.substring(open + 1, close).split(",");
      expansionsLeft -= parts.length;
      if (expansionsLeft < 0) return ["/"];
      for (let p = 0; p < parts.length; p++) next.push(w.substring(0, open) + parts[p] + w.substring(close + 1));
    }
    if (next.length > MAX_EXPANSIONS) return ["/"];
    words = next;
    if (!changed) break;
  }
  return words;
}

/** For `${NAME:-word}rest` (`-` or `=`, with or without `:`): `wordrest`; else null. */
function parameterDefault(word: string): string | null {
  if (!word.startsWith("${")) return null;
  const close = word.indexOf("}");
  if (close < 0) return null;
  let i = 2;
  while (i < close && isNameChar(word.charCodeAt(i))) i++;
  if (i == 2) return null;
  if (i < close && word.charCodeAt(i) == 0x3a) i++;
  if (i >= close || (word.charCodeAt(i) != 0x2d && word.charCodeAt(i) != 0x3d)) return null;
  return word.substring(i + 1, close) + word.substring(close + 1);
}

function isNameChar(c: i32): bool {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x5f;
}

/**
 * True when `path` (from `cwd` if relative and known) resolves to `/`, `~`, a home directory
 * (`/root`, `/home/NAME`, `/Users/NAME`), above `~`, or only `..`.
 */
function rootPath(path: string, cwd: string): bool {
  let p = homeAsTilde(path);
  if (!p.startsWith("/") && !p.startsWith("~") && cwd.length > 0) p = homeAsTilde(cwd) + "/" + p;
  let anchor = "";
  if (p.startsWith("/")) anchor = "/";
  else if (p.startsWith("~")) {
    const slash = p.indexOf("/");
    anchor = slash < 0 ? p : p.substring(0, slash);
  }
  const segments: string[] = [];
  const parts = p.substring(anchor.length).split("/");
  for (let k = 0; k < parts.length; k++) {
    const segment = parts[k];
    if (segment.length == 0 || segment == ".") continue;
    if (segment.includes("*") || segment.includes("?") || segment.includes("[")) break;
    if (segment == ".." && segments.length > 0 && segments[segments.length - 1] != "..") segments.pop();
    else if (segment != ".." || anchor != "/") segments.push(segment);
  }
  if (anchor == "/") {
    return segments.length == 0 || (segments.length == 1 && segments[0] == "root") ||
      (segments.length == 2 && HOME_PARENTS.includes(segments[0]));
  }
  if (anchor.length > 0) return segments.length == 0 || segments[0] == "..";
  if (segments.length == 0) return false;
  for (let k = 0; k < segments.length; k++) if (segments[k] != "..") return false;
  return true;
}

/** `$HOME...` and `${HOME...}...` (any operator) as `~...`. */
function homeAsTilde(path: string): string {
  if (path.startsWith("$HOME") && (path.length == 5 || path.charCodeAt(5) == 0x2f)) return "~" + path.substring(5);
  if (path.startsWith("${HOME")) {
    const close = path.indexOf("}");
    const c = path.length > 6 ? path.charCodeAt(6) : 0;
    if (close > 0 && (c == 0x7d || c == 0x3a || c == 0x2d || c == 0x3d || c == 0x3f || c == 0x2b)) {
      if (close + 1 == path.length || path.charCodeAt(close + 1) == 0x2f) return "~" + path.substring(close + 1);
    }
  }
  return path;
}

function writesDisk(argv: string[]): bool {
  for (let i = 1; i < argv.length; i++) {
    if (!argv[i].startsWith("of=")) continue;
    const target = argv[i].substring(3);
    for (let j = 0; j < DISKS.length; j++) if (target.startsWith(DISKS[j])) return true;
  }
  return false;
}

/** `name(){ name|name& };name`, whatever the name, spaces ignored. */
function isForkBomb(command: string): bool {
  const compact = command.replaceAll(" ", "").replaceAll("\t", "");
  const open = compact.indexOf("(){");
  if (open <= 0) return false;
  let start = open;
  while (start > 0 && !isSeparator(compact.charCodeAt(start - 1))) start--;
  const name = compact.substring(start, open);
  return compact.includes(name + "|" + name + "&");
}

function isSeparator(c: i32): bool {
  return c == 0x3b || c == 0x26 || c == 0x7c || c == 0x0a || c == 0x28 || c == 0x7b;
}
