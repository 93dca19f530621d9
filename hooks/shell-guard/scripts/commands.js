"use strict";
/**
 * Turns a parsed simple command into the command that really runs: leading
 * `VAR=value` assignments, reserved words and wrappers (`sudo`, `env`,
 * `nohup`, `timeout 5`, ...) are peeled off and `/usr/bin/rm` becomes `rm`.
 */

/** Wrapper name -> { options that take a value, positional words to skip }. */
const WRAPPERS = {
  sudo: { valued: ["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"], skip: 0 },
  doas: { valued: ["-u", "-C"], skip: 0 },
  pkexec: { valued: ["--user", "-u"], skip: 0 },
  env: { valued: ["-u", "-C", "-S", "--unset", "--chdir"], skip: 0 },
  nohup: { valued: [], skip: 0 },
  time: { valued: ["-f", "-o"], skip: 0 },
  nice: { valued: ["-n", "--adjustment"], skip: 0 },
  ionice: { valued: ["-c", "-n", "-p"], skip: 0 },
  timeout: { valued: ["-s", "-k", "--signal", "--kill-after"], skip: 1 },
  stdbuf: { valued: ["-i", "-o", "-e"], skip: 0 },
  command: { valued: [], skip: 0 },
  builtin: { valued: [], skip: 0 },
  exec: { valued: ["-a"], skip: 0 },
  busybox: { valued: [], skip: 0 },
  toybox: { valued: [], skip: 0 },
  rlwrap: {
    valued: [
      "-b",
      "-C",
      "-D",
      "-e",
      "-f",
      "-g",
      "-H",
      "-l",
      "-M",
      "-O",
      "-P",
      "-q",
      "-s",
      "-S",
      "-t",
      "-w",
      "-z",
    ],
    skip: 0,
  },
  xargs: { valued: ["-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a"], skip: 0 },
  // zsh's precommand modifiers and `repeat N`.
  noglob: { valued: [], skip: 0 },
  nocorrect: { valued: [], skip: 0 },
  "-": { valued: [], skip: 0 },
  repeat: { valued: [], skip: 1 },
  setsid: { valued: [], skip: 0 },
  chroot: { valued: ["--userspec", "--groups"], skip: 1 },
  unshare: { valued: ["-S", "-G", "--setuid", "--setgid", "-R", "-w"], skip: 0 },
  runuser: { valued: ["-u", "-g", "-G", "--user", "--group"], skip: 0 },
  nsenter: { valued: ["-t", "--target", "-S", "--setuid", "-G", "--setgid"], skip: 0 },
  // Programs that run a command under a tracer, a limit, a namespace or another identity.
  strace: {
    valued: ["-o", "-e", "-p", "-s", "-u", "-E", "-a", "-I", "-P", "-X", "-O", "-S", "-b"],
    skip: 0,
  },
  ltrace: { valued: ["-o", "-e", "-p", "-s", "-u", "-a", "-l", "-n", "-x", "-A", "-D"], skip: 0 },
  valgrind: { valued: [], skip: 0 },
  catchsegv: { valued: [], skip: 0 },
  setpriv: {
    valued: [
      "--reuid",
      "--regid",
      "--ruid",
      "--rgid",
      "--euid",
      "--egid",
      "--groups",
      "--inh-caps",
      "--ambient-caps",
      "--bounding-set",
      "--securebits",
      "--pdeathsig",
      "--selinux-label",
      "--apparmor-profile",
    ],
    skip: 0,
  },
  taskset: { valued: [], skip: 1 },
  chrt: { valued: ["-T", "-P", "-D"], skip: 1 },
  numactl: { valued: ["-i", "-N", "-m", "-p", "-C"], skip: 0 },
  prlimit: { valued: ["-p", "--pid", "-o", "--output"], skip: 0 },
  cgexec: { valued: ["-g"], skip: 0 },
  "xvfb-run": { valued: ["-n", "-e", "-f", "-p", "-s", "-w"], skip: 0 },
  "dbus-run-session": { valued: ["--config-file", "--dbus-daemon"], skip: 0 },
  "ssh-agent": { valued: ["-a", "-E", "-t", "-P", "-O"], skip: 0 },
  fakeroot: { valued: ["-l", "--lib", "--faked", "-s", "-i"], skip: 0 },
  faketime: { valued: [], skip: 1 },
  firejail: { valued: [], skip: 0 },
  proot: { valued: ["-r", "-b", "-m", "-w", "-q", "-k"], skip: 0 },
  "systemd-run": {
    valued: ["-u", "--unit", "-p", "--property", "--description", "--slice", "-E", "--setenv"]
      .concat(["--uid", "--gid", "--nice", "-M", "--machine", "-H", "--host"])
      .concat(["--working-directory", "--on-active", "--on-calendar", "--service-type"]),
    skip: 0,
  },
  "systemd-inhibit": { valued: ["--what", "--who", "--why", "--mode"], skip: 0 },
  "flatpak-spawn": { valued: [], skip: 0 },
  torsocks: { valued: ["-u", "-p", "-a", "-P"], skip: 0 },
  proxychains: { valued: ["-f"], skip: 0 },
  proxychains4: { valued: ["-f"], skip: 0 },
  unbuffer: { valued: [], skip: 0 },
  caffeinate: { valued: ["-t", "-w"], skip: 0 },
  "sandbox-exec": { valued: ["-f", "-n", "-p", "-D"], skip: 0 },
};
/**
 * Tools that run a command in an environment they set up, after a verb: `bundle exec CMD`,
 * `poetry run CMD`, `uv run CMD`, `direnv exec DIR CMD` (tool -> { verb, positional words to
 * skip after it, options after it that take a value }). An option not listed is skipped as a
 * flag, so its value may be taken for the command (a command missed, never one made up).
 */
const RUNNER_VERBS = {
  bundle: { verb: "exec", skip: 0, valued: ["--gemfile"] },
  poetry: { verb: "run", skip: 0, valued: ["-C", "--directory", "-P", "--project"] },
  pipenv: { verb: "run", skip: 0, valued: [] },
  uv: {
    verb: "run",
    skip: 0,
    valued: ["--with", "-p", "--python", "--package", "--extra", "--group", "--env-file"]
      .concat(["--directory", "--project", "--index", "--from", "-w", "--with-requirements"]),
  },
  pdm: { verb: "run", skip: 0, valued: ["-p", "--project"] },
  hatch: { verb: "run", skip: 0, valued: [] },
  rye: { verb: "run", skip: 0, valued: [] },
  pixi: { verb: "run", skip: 0, valued: ["-e", "--environment", "--manifest-path"] },
  conda: { verb: "run", skip: 0, valued: ["-n", "--name", "-p", "--prefix", "--cwd"] },
  mamba: { verb: "run", skip: 0, valued: ["-n", "--name", "-p", "--prefix", "--cwd"] },
  micromamba: { verb: "run", skip: 0, valued: ["-n", "--name", "-p", "--prefix", "--cwd"] },
  mise: { verb: "exec", skip: 0, valued: ["-C", "--cd", "-j", "--jobs"] },
  asdf: { verb: "exec", skip: 0, valued: [] },
  rbenv: { verb: "exec", skip: 0, valued: [] },
  pyenv: { verb: "exec", skip: 0, valued: [] },
  direnv: { verb: "exec", skip: 1, valued: [] },
  pnpm: { verb: "exec", skip: 0, valued: ["-C", "--dir", "-F", "--filter"] },
  yarn: { verb: "exec", skip: 0, valued: [] },
};
const RESERVED = new Set([
  "if",
  "then",
  "else",
  "elif",
  "do",
  "while",
  "until",
  "!",
  "{",
  "}",
  "coproc",
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** `/usr/bin/rm` -> `rm`; zsh's `=rm` (the path of `rm`) -> `rm`. */
function baseName(word) {
  const base = word.slice(word.lastIndexOf("/") + 1);
  return base.startsWith("=") ? base.slice(1) : base;
}

/**
 * The program a command word names without spelling it, or null: the running shell by variable
 * (`$SHELL`, `${SHELL:-sh}`, `$BASH`, `$0`) is `sh`; a lookup's output (`$(which bash)`,
 * `` `command -v python3` ``) is the program it looks up.
 */
function namedProgram(word) {
  if (!word.startsWith("$") && !word.startsWith("`")) return null;
  if (/^\$(?:SHELL|BASH|0)$|^\$\{(?:SHELL|BASH|0)(?:[:}%#/^,@-])/.test(word)) return "sh";
  const lookup = /^(?:\$\(|`)\s*(?:which|whereis|command\s+-[vV]|type\s+-[Pp])\s+([^\s)`]+)\s*[)`]$/
    .exec(word);
  return lookup === null ? null : baseName(lookup[1]);
}

/** Index of the first word after the wrapper at `start` and its options. */
function skipWrapper(argv, start, spec) {
  let i = start + 1;
  while (i < argv.length && argv[i].startsWith("-") && argv[i] !== "--") {
    i += spec.valued.includes(argv[i]) ? 2 : 1;
  }
  if (argv[i] === "--") i++;
  while (i < argv.length && ASSIGNMENT.test(argv[i])) i++;
  return i + spec.skip;
}

/** The argv that actually runs, wrappers removed; `[]` when nothing runs. */
function effectiveArgv(argv) {
  let i = 0;
  for (;;) {
    for (;;) {
      if (i < argv.length && (ASSIGNMENT.test(argv[i]) || RESERVED.has(argv[i]))) {
        // `coproc NAME { ... }` names the coprocess; `coproc cmd` runs cmd.
        i += argv[i] === "coproc" && argv[i + 2] === "{" ? 2 : 1;
      } else if (argv[i] === "function") i += 2; // `function NAME { ... }`: the body runs later
      else break;
    }
    if (i >= argv.length) return [];
    // `capsh [options] -- ARGS` runs bash with ARGS (`capsh -- -c CMD`).
    if (baseName(argv[i]) === "capsh") {
      const end = argv.indexOf("--", i + 1);
      return end === -1 ? [] : ["bash"].concat(argv.slice(end + 1));
    }
    const name = namedProgram(argv[i]) ?? baseName(argv[i]);
    const verb = Object.prototype.hasOwnProperty.call(RUNNER_VERBS, name)
      ? RUNNER_VERBS[name]
      : null;
    if (verb !== null) {
      let at = i + 1;
      while (at < argv.length && argv[at].startsWith("-")) at++;
      if (argv[at] === verb.verb) {
        i = skipWrapper(argv, at, verb);
        continue;
      }
    }
    const spec = Object.prototype.hasOwnProperty.call(WRAPPERS, name) ? WRAPPERS[name] : null;
    if (spec === null) return [name].concat(argv.slice(i + 1));
    i = skipWrapper(argv, i, spec);
  }
}

/** Splits argv into short/long option words and operands (after `--` all are operands). */
function splitOptions(args) {
  const options = [];
  const operands = [];
  let ended = false;
  for (const arg of args) {
    if (!ended && arg === "--") ended = true;
    else if (!ended && arg.length > 1 && arg.startsWith("-")) options.push(arg);
    else operands.push(arg);
  }
  return { options, operands };
}

/**
 * True when a short-option cluster (`-rf`) holds one of `letters` or a long
 * option equals `long` (`--force`, `--force=x`).
 */
function hasFlag(options, letters, long) {
  return options.some((o) =>
    o.startsWith("--")
      ? o === long || o.startsWith(long + "=")
      : o.slice(1).split("").some((c) => letters.includes(c))
  );
}

module.exports = { baseName, effectiveArgv, splitOptions, hasFlag };
