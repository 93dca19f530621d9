// deno-fmt-ignore-file -- AssemblyScript source.
/**
 * Splits a shell command line into simple commands, for guards:
 * `import { splitCommands } from "hookbox/shell"`. Quotes and backslashes
 * are honoured; `;`, `&&`, `||`, `&`, `|`, newlines and parentheses separate
 * commands. Wrappers (`sudo -u root`, `env X=1`, `nice -n 5`, `timeout 5`,
 * `if`/`then`, `VAR=value`, ...) are dropped with their options and the words
 * they take, and the program is reduced to its base name (`/bin/rm` → `rm`).
 * It is a guard's approximation of a shell, not a shell.
 */

/** Programs that run the command after them; with VALUED and POSITIONAL, index by index. */
const WRAPPERS = [
  "sudo", "doas", "env", "nohup", "time", "nice", "ionice", "timeout", "stdbuf", "command",
  "builtin", "exec", "busybox", "xargs",
];
/** Each wrapper's options that take the next word as their value. */
const VALUED: string[][] = [
  ["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"], ["-u", "-C"],
  ["-u", "-C", "-S", "--unset", "--chdir"], [], ["-f", "-o"], ["-n", "--adjustment"],
  ["-c", "-n", "-p"], ["-s", "-k", "--signal", "--kill-after"], ["-i", "-o", "-e"], [], [],
  ["-a"], [], ["-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a"],
];
/** Words each wrapper takes after its options, before the command (`timeout 5`). */
const POSITIONAL: i32[] = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
const RESERVED = ["if", "then", "else", "elif", "do", "while", "until", "!", "{", "}"];

/** One simple command of a command line. */
export class SimpleCommand {
  /** Words; `argv[0]` is the program's base name. */
  argv: string[] = [];
  /** Index of the command piping into this one (`a | b`), or -1. */
  pipedFrom: i32 = -1;
  /** The wrappers peeled off in front of it (`sudo`, `xargs`, ...), by base name, in order. */
  wrappers: string[] = [];
  /** The `NAME=value` words in front of it, before any wrapper. */
  assignments: string[] = [];
}

/**
 * The simple commands of `line`, in order. A word is gathered as pieces
 * (runs of plain text, unquoted text, escaped characters) joined once at its
 * end, so that time and memory stay linear however the line quotes: the AS
 * runtime does not collect garbage during a call.
 */
export function splitCommands(line: string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let words: string[] = [];
  let pieces: string[] = [];
  let inWord = false;
  let pipedFrom: i32 = -1;
  let plain: i32 = -1; // start of a run of ordinary characters, copied in one slice
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (isOrdinary(c)) {
      if (plain < 0) plain = i;
      inWord = true;
      continue;
    }
    // `$'...'` (ANSI-C quoting): a `'` right after a plain `$`, which is dropped.
    const ansi = c == 0x27 && plain >= 0 && line.charCodeAt(i - 1) == 0x24;
    if (plain >= 0) {
      pieces.push(line.substring(plain, ansi ? i - 1 : i));
      plain = -1;
    }
    if (ansi) {
      const end = closingAnsiQuote(line, i);
      ansiUnquoteInto(pieces, line, i + 1, end);
      inWord = true;
      i = end;
    } else if (c == 0x27 || c == 0x22) { // ' or "
      const end = closingQuote(line, i);
      unquoteInto(pieces, line, i + 1, end, c);
      inWord = true;
      i = end;
    } else if (c == 0x5c && i + 1 < line.length) { // backslash
      pieces.push(line.charAt(++i));
      inWord = true;
    } else if (c == 0x20 || c == 0x09) {
      if (inWord) words.push(pieces.join(""));
      pieces = []; inWord = false;
    } else if (isBreak(c) && !(c == 0x26 && endsWithRedirect(pieces))) {
      if (inWord) words.push(pieces.join(""));
      pieces = []; inWord = false;
      const pipe = c == 0x7c && !(i + 1 < line.length && line.charCodeAt(i + 1) == 0x7c);
      if (words.length > 0 || pipe) {
        commands.push(finish(words, pipedFrom));
        words = [];
      }
      pipedFrom = pipe ? commands.length - 1 : -1;
      if (!pipe && i + 1 < line.length && line.charCodeAt(i + 1) == c) i++;
    } else {
      pieces.push(String.fromCharCode(c)); // `&` inside a redirection (2>&1)
      inWord = true;
    }
  }
  if (plain >= 0) pieces.push(line.substring(plain));
  if (inWord) words.push(pieces.join(""));
  if (words.length > 0) commands.push(finish(words, pipedFrom));
  return commands;
}

/** The `'` closing the `$'...'` opened at `open` (where `\'` does not close it). */
function closingAnsiQuote(line: string, open: i32): i32 {
  for (let i = open + 1; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c == 0x5c) i++;
    else if (c == 0x27) return i;
  }
  return line.length;
}

/**
 * The text of `$'...'` between `from` and `to` with its escapes decoded as
 * bash does (`\x2f` and `\057` are `/`), as pieces of the word.
 */
function ansiUnquoteInto(pieces: string[], line: string, from: i32, to: i32): void {
  let run = from;
  for (let i = from; i < to; i++) {
    if (line.charCodeAt(i) != 0x5c || i + 1 >= to) continue;
    pieces.push(line.substring(run, i));
    const e = line.charCodeAt(++i);
    let digits = 0, base = 0, max = 0;
    if (e == 0x78) { base = 16; max = 2; i++; } // \xHH
    else if (e == 0x75) { base = 16; max = 4; i++; } // \uHHHH
    else if (e == 0x55) { base = 16; max = 8; i++; } // \UHHHHHHHH
    else if (e >= 0x30 && e <= 0x37) { base = 8; max = 3; } // \nnn
    if (base > 0) {
      let value = 0;
      while (digits < max && i < to && digitValue(line.charCodeAt(i), base) >= 0) {
        value = value * base + digitValue(line.charCodeAt(i), base);
        digits++;
        i++;
      }
      i--;
      if (digits == 0) pieces.push("\\" + String.fromCharCode(e));
      else pieces.push(String.fromCodePoint(base == 8 ? value & 0xff : min(value, 0x10ffff)));
    } else if (e == 0x6e) pieces.push("\n");
    else if (e == 0x74) pieces.push("\t");
    else if (e == 0x72) pieces.push("\r");
    else if (e == 0x61) pieces.push("\x07");
    else if (e == 0x62) pieces.push("\b");
    else if (e == 0x65 || e == 0x45) pieces.push("\x1b");
    else if (e == 0x66) pieces.push("\f");
    else if (e == 0x76) pieces.push("\v");
    else if (e == 0x63 && i + 1 < to) pieces.push(String.fromCharCode(line.charCodeAt(++i) & 0x1f));
    else pieces.push(String.fromCharCode(e)); // \\ \' \" and any other character
    run = i + 1;
  }
  pieces.push(line.substring(run, to));
}

/** The value of digit `c` in `base` (8 or 16), or -1. */
function digitValue(c: i32, base: i32): i32 {
  if (c >= 0x30 && c <= 0x37) return c - 0x30;
  if (base == 8) return -1;
  if (c >= 0x38 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/** The word so far ends with `>` or `<` (so `&` is part of a redirection: `2>&1`). */
function endsWithRedirect(pieces: string[]): bool {
  for (let k = pieces.length - 1; k >= 0; k--) {
    const piece = pieces[k];
    if (piece.length == 0) continue;
    const last = piece.charCodeAt(piece.length - 1);
    return last == 0x3e || last == 0x3c;
  }
  return false;
}

function isOrdinary(c: i32): bool {
  return !(c == 0x27 || c == 0x22 || c == 0x5c || c == 0x20 || c == 0x09 || isBreak(c));
}

function isBreak(c: i32): bool {
  return c == 0x3b || c == 0x26 || c == 0x7c || c == 0x0a || c == 0x28 || c == 0x29 || c == 0x60;
}

function closingQuote(line: string, open: i32): i32 {
  const quote = line.charCodeAt(open);
  for (let i = open + 1; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c == 0x5c && quote == 0x22) i++;
    else if (c == quote) return i;
  }
  return line.length;
}

/** The text of `line` between `from` and `to`, quoted with `quote`, as pieces of the word. */
function unquoteInto(pieces: string[], line: string, from: i32, to: i32, quote: i32): void {
  if (quote == 0x27) {
    pieces.push(line.substring(from, to));
    return;
  }
  let run = from;
  for (let i = from; i < to; i++) {
    if (line.charCodeAt(i) != 0x5c || i + 1 >= to) continue;
    // Inside double quotes a backslash escapes only $ ` " \ and a newline (`\n` stays `\n`).
    const next = line.charCodeAt(i + 1);
    if (next == 0x24 || next == 0x60 || next == 0x22 || next == 0x5c || next == 0x0a) {
      pieces.push(line.substring(run, i));
      run = ++i; // the escaped character starts the next run
    } else {
      i++;
    }
  }
  pieces.push(line.substring(run, to));
}

function finish(words: string[], pipedFrom: i32): SimpleCommand {
  const command = new SimpleCommand();
  command.argv = words.slice(programAt(words, command.wrappers, command.assignments));
  if (command.argv.length > 0) {
    const program = command.argv[0];
    command.argv[0] = program.substring(program.lastIndexOf("/") + 1);
  }
  command.pipedFrom = pipedFrom;
  return command;
}

/** Index of the word that runs: past assignments, reserved words and wrappers with their options. */
function programAt(words: string[], wrappers: string[], assignments: string[]): i32 {
  let i = 0;
  while (i < words.length) {
    if (RESERVED.includes(words[i]) || isAssignment(words[i])) {
      if (wrappers.length == 0 && isAssignment(words[i])) assignments.push(words[i]);
      i++;
      continue;
    }
    const w = WRAPPERS.indexOf(words[i].substring(words[i].lastIndexOf("/") + 1));
    if (w < 0) return i;
    wrappers.push(WRAPPERS[w]);
    i++;
    while (i < words.length && words[i].startsWith("-") && words[i] != "--") {
      i += VALUED[w].includes(words[i]) ? 2 : 1;
    }
    if (i < words.length && words[i] == "--") i++;
    while (i < words.length && isAssignment(words[i])) i++;
    i += POSITIONAL[w];
  }
  return words.length;
}

/** `NAME=value`. */
export function isAssignment(word: string): bool {
  const eq = word.indexOf("=");
  if (eq <= 0) return false;
  for (let i = 0; i < eq; i++) {
    const c = word.charCodeAt(i);
    const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x5f;
    if (!letter && !(i > 0 && c >= 0x30 && c <= 0x39)) return false;
  }
  return true;
}
