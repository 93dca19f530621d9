// deno-fmt-ignore-file -- AssemblyScript source.
/**
 * Splits a shell command line into simple commands, for guards:
 * `import { splitCommands } from "hookbox/shell"`. Quotes and backslashes
 * are honoured; `;`, `&&`, `||`, `&`, `|`, newlines and parentheses separate
 * commands. Wrappers (`sudo`, `env`, `nohup`, `if`/`then`, `VAR=value`, ...)
 * are dropped and the program is reduced to its base name (`/bin/rm` → `rm`).
 * It is a guard's approximation of a shell, not a shell.
 */

const WRAPPERS = [
  "sudo", "doas", "env", "command", "exec", "nohup", "time", "nice", "xargs",
  "if", "then", "else", "elif", "do", "while", "until", "!", "{", "}",
];

/** One simple command of a command line. */
export class SimpleCommand {
  /** Words; `argv[0]` is the program's base name. */
  argv: string[] = [];
  /** Index of the command piping into this one (`a | b`), or -1. */
  pipedFrom: i32 = -1;
}

/** The simple commands of `line`, in order. */
export function splitCommands(line: string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let words: string[] = [];
  let word = "";
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
    if (plain >= 0) {
      word += line.substring(plain, i);
      plain = -1;
    }
    if (c == 0x27 || c == 0x22) { // ' or "
      const end = closingQuote(line, i);
      word += unquote(line.substring(i + 1, end), c);
      inWord = true;
      i = end;
    } else if (c == 0x5c && i + 1 < line.length) { // backslash
      word += line.charAt(++i);
      inWord = true;
    } else if (c == 0x20 || c == 0x09) {
      if (inWord) words.push(word);
      word = ""; inWord = false;
    } else if (isBreak(c) && !(c == 0x26 && (word.endsWith(">") || word.endsWith("<")))) {
      if (inWord) words.push(word);
      word = ""; inWord = false;
      const pipe = c == 0x7c && !(i + 1 < line.length && line.charCodeAt(i + 1) == 0x7c);
      if (words.length > 0 || pipe) {
        commands.push(finish(words, pipedFrom));
        words = [];
      }
      pipedFrom = pipe ? commands.length - 1 : -1;
      if (!pipe && i + 1 < line.length && line.charCodeAt(i + 1) == c) i++;
    } else {
      word += String.fromCharCode(c); // `&` inside a redirection (2>&1)
      inWord = true;
    }
  }
  if (plain >= 0) word += line.substring(plain);
  if (inWord) words.push(word);
  if (words.length > 0) commands.push(finish(words, pipedFrom));
  return commands;
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

function unquote(text: string, quote: i32): string {
  if (quote == 0x27 || text.indexOf("\\") < 0) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) == 0x5c && i + 1 < text.length) i++;
    out += text.charAt(i);
  }
  return out;
}

function finish(words: string[], pipedFrom: i32): SimpleCommand {
  let start = 0;
  while (start < words.length && isWrapper(words[start])) start++;
  const command = new SimpleCommand();
  command.argv = words.slice(start);
  if (command.argv.length > 0) {
    const program = command.argv[0];
    command.argv[0] = program.substring(program.lastIndexOf("/") + 1);
  }
  command.pipedFrom = pipedFrom;
  return command;
}

function isWrapper(word: string): bool {
  if (WRAPPERS.includes(word)) return true;
  if (word.startsWith("-")) return true; // options of a wrapper (sudo -E)
  const eq = word.indexOf("=");
  return eq > 0 && !word.startsWith("=");
}
