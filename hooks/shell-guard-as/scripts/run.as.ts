// deno-fmt-ignore-file -- AssemblyScript source.
// deno-lint-ignore-file verbatim-module-syntax -- AssemblyScript has no `import type`.
/**
 * shell-guard-as: blocks dangerous shell commands before a Shell/Bash tool
 * runs them. Exit 2 with the reason on stderr, or exit 0 with no output.
 */

import { ALLOW, block, input, json } from "hookbox";
import { splitCommands, SimpleCommand } from "hookbox/shell";

const SHELLS = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];
/** Scripts inside scripts (`sh -c`, `eval`) deeper than this are blocked, not let through. */
const MAX_DEPTH = 6;
const DISKS = ["/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/disk"];
const ROOTS = ["/", "/*", "/.", "~", "~/", "~/*", "$HOME", "$HOME/", "${HOME}"];

export function hook(): i32 {
  const command = json.getString(input.text(), ["tool_input", "command"]);
  if (command === null) return ALLOW;
  const reason = checkLine(command, 0);
  return reason.length > 0 ? block("shell-guard: " + reason) : ALLOW;
}

/** Why `line` is dangerous, or "". `sh -c "..."` and `eval ...` are checked recursively. */
function checkLine(line: string, depth: i32): string {
  if (isForkBomb(line)) return "fork bomb";
  const commands = splitCommands(line);
  for (let i = 0; i < commands.length; i++) {
    let reason = check(commands, i);
    if (reason.length == 0) {
      const script = innerScript(commands[i].argv);
      if (script !== null) {
        reason = depth >= MAX_DEPTH ? "nested too deeply to check" : checkLine(script, depth + 1);
      }
    }
    if (reason.length > 0) return reason;
  }
  return "";
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

function check(commands: SimpleCommand[], i: i32): string {
  const argv = commands[i].argv;
  if (argv.length == 0) return "";
  const name = argv[0];
  if (name == "rm" && isRootWipe(argv)) return "recursive forced delete of / or ~ (" + argv.join(" ") + ")";
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

function isRootWipe(argv: string[]): bool {
  let recursive = false, force = false, root = false;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i];
    if (arg == "--recursive") recursive = true;
    else if (arg == "--force") force = true;
    else if (arg.startsWith("-") && !arg.startsWith("--")) {
      if (arg.includes("r") || arg.includes("R")) recursive = true;
      if (arg.includes("f")) force = true;
    } else if (ROOTS.includes(arg)) root = true;
  }
  return recursive && force && root;
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
