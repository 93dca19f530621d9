"use strict";
/**
 * A small reader for POSIX shell command lines, for guards. It splits text
 * into pipelines of simple commands (`argv` with quotes removed, redirects
 * with their targets, here-document bodies) and also reads the text of every
 * command substitution (`$(...)`, backticks, `<(...)`), because that runs
 * too. It never expands anything: `$HOME` stays the word `$HOME`, `*` stays
 * `*`. Unterminated quotes or parentheses run to the end of the text.
 */

const OPERATORS = [
  "<<<",
  "<<-",
  "&>>",
  ";;",
  "&&",
  "||",
  "|&",
  "&>",
  ">>",
  ">|",
  ">&",
  "<<",
  "<&",
  "<>",
  ";",
  "&",
  "|",
  "(",
  ")",
  "<",
  ">",
];
const PIPES = new Set(["|", "|&"]);
/** An escape of `$'...'` after its backslash: `\xHH`, `\uHHHH`, `\UHHHHHHHH`, `\nnn`, `\cX`, `\n`. */
const ANSI_ESCAPE =
  /^(?:x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c[\s\S]|[\s\S])/;
/** What the one-letter escapes of `$'...'` stand for; any other character stands for itself. */
const ANSI_SIMPLE = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};
/** Characters that are never special, read as one run (most of a command). */
const PLAIN = /[^\s'"\\`$<>|&;()#]+/y;
const REDIRECTS = new Set([
  ">",
  ">>",
  ">|",
  "&>",
  "&>>",
  "<",
  "<>",
  ">&",
  "<&",
  "<<<",
  "<<",
  "<<-",
]);

function indexOrEnd(text, needle, from) {
  const at = text.indexOf(needle, from);
  return at === -1 ? text.length : at;
}

/** Index of the `)` closing the `(` at `open` (or the end of the text). */
function closeParen(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === "'") i = indexOrEnd(text, "'", i + 1);
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i;
  }
  return text.length;
}

function operatorAt(text, i) {
  if (!"<>|&;()".includes(text[i])) return null;
  for (const op of OPERATORS) if (text.startsWith(op, i)) return op;
  return null;
}

class Lexer {
  constructor(text) {
    this.text = text;
    this.i = 0;
    this.tokens = [];
    this.nested = [];
    this.word = null;
    this.heredocs = [];
  }

  add(s) {
    this.word = (this.word === null ? "" : this.word) + s;
  }

  flush() {
    if (this.word === null) return;
    const waiting = this.heredocs.find((doc) => doc.delimiter === null);
    if (waiting) waiting.delimiter = this.word;
    this.tokens.push({ word: this.word });
    this.word = null;
  }

  /** Reads `$(...)`, `<(...)` or `>(...)` starting at `this.i`; its text is nested. */
  substitution() {
    const end = closeParen(this.text, this.i + 1);
    this.nested.push(this.text.slice(this.i + 2, end));
    const raw = this.text.slice(this.i, end + 1);
    this.i = end + 1;
    return raw;
  }

  backtick() {
    const end = indexOrEnd(this.text, "`", this.i + 1);
    this.nested.push(this.text.slice(this.i + 1, end));
    const raw = this.text.slice(this.i, end + 1);
    this.i = end + 1;
    return raw;
  }

  doubleQuoted() {
    const text = this.text;
    let out = "";
    this.i++;
    while (this.i < text.length && text[this.i] !== '"') {
      const c = text[this.i];
      if (c === "\\" && '"\\$`\n'.includes(text[this.i + 1] || "x")) {
        if (text[this.i + 1] !== "\n") out += text[this.i + 1];
        this.i += 2;
      } else if (c === "$" && text[this.i + 1] === "(") out += this.substitution();
      else if (c === "`") out += this.backtick();
      else {
        out += c;
        this.i++;
      }
    }
    this.i++;
    this.add(out);
  }

  /**
   * `$'...'`, starting at `this.i`: ANSI-C quoting, whose escapes bash
   * decodes (`$'\x2f'` is `/`), so the word is what the command gets.
   */
  ansiQuoted() {
    const text = this.text;
    let out = "";
    this.i += 2;
    while (this.i < text.length && text[this.i] !== "'") {
      if (text[this.i] !== "\\") {
        out += text[this.i++];
        continue;
      }
      const escape = ANSI_ESCAPE.exec(text.slice(this.i + 1, this.i + 11));
      const [seq, kind] = escape ? [escape[0], escape[0][0]] : ["", ""];
      if (kind === "x" || kind === "u" || kind === "U") {
        out += String.fromCodePoint(Math.min(parseInt(seq.slice(1), 16), 0x10ffff));
      } else if (/[0-7]/.test(kind)) out += String.fromCharCode(parseInt(seq, 8) & 0xff);
      else if (kind === "c") out += String.fromCharCode(seq.charCodeAt(1) & 0x1f);
      else out += ANSI_SIMPLE[kind] ?? (kind || "\\");
      this.i += 1 + seq.length;
    }
    this.i++;
    this.add(out);
  }

  /** After a newline: the bodies of pending here-documents. */
  heredocBodies() {
    for (const doc of this.heredocs) {
      const lines = [];
      while (this.i < this.text.length) {
        const eol = indexOrEnd(this.text, "\n", this.i);
        const line = this.text.slice(this.i, eol);
        this.i = eol + 1;
        if ((doc.strip ? line.replace(/^\t+/, "") : line) === doc.delimiter) break;
        lines.push(line);
      }
      doc.token.body = lines.join("\n");
    }
    this.heredocs = [];
  }

  operator(op) {
    // `2>` and `3<`: the number names the redirected descriptor, not a word.
    let fd = null;
    if (/^[<>]/.test(op) && this.word !== null && /^\d+$/.test(this.word)) {
      fd = Number(this.word);
      this.word = null;
    }
    this.flush();
    const token = fd === null ? { op } : { op, fd };
    this.tokens.push(token);
    this.i += op.length;
    if (op === "<<" || op === "<<-") {
      this.heredocs.push({ token, strip: op === "<<-", delimiter: null });
    }
    if (op === "\n") this.heredocBodies();
  }

  step() {
    const text = this.text;
    const c = text[this.i];
    const next = text[this.i + 1];
    if (c === " " || c === "\t" || c === "\r") {
      this.flush();
      this.i++;
    } else if (c === "\n") this.operator("\n");
    else if (c === "#" && this.word === null) this.i = indexOrEnd(text, "\n", this.i);
    else if (c === "\\") {
      if (next !== "\n") this.add(next || "");
      this.i += 2;
    } else if (c === "'") {
      const end = indexOrEnd(text, "'", this.i + 1);
      this.add(text.slice(this.i + 1, end));
      this.i = end + 1;
    } else if (c === '"') this.doubleQuoted();
    else if (c === "$" && next === "'") this.ansiQuoted();
    else if (c === "$" && next === '"') {
      this.i++; // $"..." is a double-quoted string (translated by locale)
      this.doubleQuoted();
    } else if (c === "`") this.add(this.backtick());
    else if ((c === "$" || c === "<" || c === ">") && next === "(") this.add(this.substitution());
    else {
      const op = operatorAt(text, this.i);
      if (op) this.operator(op);
      else this.plain();
    }
  }

  /** A run of characters with no special meaning, taken in one step. */
  plain() {
    PLAIN.lastIndex = this.i;
    const run = PLAIN.exec(this.text);
    const end = run ? this.i + run[0].length : this.i + 1;
    this.add(this.text.slice(this.i, end));
    this.i = end;
  }

  run() {
    while (this.i < this.text.length) this.step();
    this.flush();
    return this;
  }
}

function newCommand() {
  return { argv: [], redirects: [] };
}

/** Groups tokens into pipelines (arrays of commands). */
function group(tokens) {
  const pipelines = [];
  let pipeline = [];
  let command = newCommand();
  const endCommand = () => {
    if (command.argv.length || command.redirects.length) pipeline.push(command);
    command = newCommand();
  };
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k];
    if (token.op === undefined) command.argv.push(token.word);
    else if (PIPES.has(token.op)) endCommand();
    else if (REDIRECTS.has(token.op)) {
      const target = tokens[k + 1] && tokens[k + 1].op === undefined ? tokens[++k].word : "";
      const redirect = { op: token.op, target, body: token.body || "" };
      if (token.fd !== undefined) redirect.fd = token.fd;
      command.redirects.push(redirect);
    } else {
      endCommand();
      if (pipeline.length) pipelines.push(pipeline);
      pipeline = [];
    }
  }
  endCommand();
  if (pipeline.length) pipelines.push(pipeline);
  return pipelines;
}

/**
 * Reads `text` and, down to `maxDepth` levels, the command substitutions in
 * it. Returns `{ pipelines, tooDeep }`; `pipelines` is a flat list, outer
 * text first; `tooDeep` says some substitution was left unread.
 */
function readShell(text, maxDepth) {
  const lexer = new Lexer(text).run();
  const pipelines = group(lexer.tokens);
  let tooDeep = false;
  for (const inner of lexer.nested) {
    if (maxDepth <= 0) {
      tooDeep = true;
      break;
    }
    const result = readShell(inner, maxDepth - 1);
    pipelines.push(...result.pipelines);
    tooDeep = tooDeep || result.tooDeep;
  }
  return { pipelines, tooDeep };
}

module.exports = { readShell };
