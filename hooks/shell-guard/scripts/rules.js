"use strict";
/**
 * The shell-guard rule list. Each rule has an `id` (shown in the block
 * reason), a one-line `about`, and one or more checks: `text` (the raw
 * command text), `command` (the effective argv of one simple command, with
 * its redirects), `pipeline` (the argvs of one pipeline, then the same
 * words before wrappers were peeled off, and the working folder), `session`
 * (the argvs of one pipeline and its parsed commands, redirects included) or `words` (one
 * command's words as written, assignments and wrappers included). A check returns
 * true when the rule is broken. Edit CONFIG to tune what counts as
 * dangerous; list rule ids in `disabled` to switch rules off.
 */
const { baseName, effectiveArgv, splitOptions, hasFlag } = require("./commands.js");
const {
  opensShell,
  containerCall,
  networkPrograms,
  remoteCommand,
  readsTerminal,
  cloudShell,
} = require("./terminals.js");

/** The shells (`pipe-to-shell`, scripts handed to one; `typed-session` adds csh and tcsh). */
const SHELLS = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

const CONFIG = {
  disabled: [],
  protectedBranches: ["main", "master"],
  systemDirs: [
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib64",
    "/opt",
    "/proc",
    "/root",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    // Below them, the folders a system cannot do without.
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/share",
    "/usr/include",
    "/usr/local",
    "/var/lib",
    "/Users",
    "/System",
    "/Library",
  ],
  // Folders whose every subfolder is a user's home directory (`/home/alice`, `/Users/alice`).
  homeParents: ["/home", "/Users"],
  // Disks and partitions by name, by link (`/dev/disk/by-id/...`, `/dev/block/8:0`, `/dev/root`)
  // and LVM volumes (`/dev/VG/LV`: any `/dev/A/B` but the folders of other devices).
  diskDevice: new RegExp(
    "^/dev/(?:sd[a-z]|nvme\\d|hd[a-z]|vd[a-z]|xvd[a-z]|mmcblk\\d|disk\\d|md\\d|dm-\\d|nbd\\d|" +
      "mapper/|disk/|block/|root$|" +
      "(?!(?:shm|pts|fd|mqueue|hugepages|net|snd|input|dri|bus|char|cpu|vfio|usb|v4l|serial)/)" +
      "[^/]+/[^/]+$)",
  ),
  // Commands that erase or partition a disk device given to them (rule "disk-write"); editors
  // that only list with -l/print; copiers whose last operand is the destination.
  diskWriters: [
    "shred",
    "wipefs",
    "blkdiscard",
    "truncate",
    "mkswap",
    "sgdisk",
    "sfdisk",
    "badblocks",
  ],
  diskEditors: ["fdisk", "gdisk", "cfdisk", "parted"],
  copiers: ["cp", "mv", "install", "pv"],
  downloaders: ["curl", "wget", "fetch", "aria2c"],
  shells: SHELLS,
  // What each shell or interpreter needs to know to tell whether it reads its commands from its
  // input (rule "typed-session"): options whose next word is their value, options that give it
  // its program, options that make it read its input anyway, options that only print and exit.
  sessions: {
    shell: {
      names: SHELLS.concat(["csh", "tcsh"]),
      valued: ["-o", "+o", "-O", "+O", "--rcfile", "--init-file", "--init-command", "-C"],
      program: ["-c", "--command"],
      input: ["-s", "-i", "--interactive"],
      info: ["--version", "--help"],
    },
    python: {
      names: ["python", "python2", "python3", "pypy", "pypy3", "ipython", "ipython3"],
      valued: ["-W", "-X", "--check-hash-based-pycs"],
      program: ["-c", "-m"],
      input: ["-i"],
      // Modules that are a prompt running Python typed at it (`python3 -m pdb app.py`).
      prompts: ["pdb", "code", "asyncio", "ipdb", "pudb", "IPython", "bpython", "ptpython"],
      info: ["-V", "--version", "-h", "-?", "--help"],
    },
    node: {
      names: ["node", "nodejs", "deno", "bun"],
      valued: ["-r", "--require", "--import", "--loader", "--experimental-loader", "-C"],
      program: ["-e", "--eval", "-p", "--print", "--test", "run", "eval", "test", "x", "exec"],
      input: ["-i", "--interactive", "repl"],
      info: ["-v", "--version", "-h", "--help", "--v8-options"],
    },
    perl: {
      names: ["perl"],
      valued: ["-I", "-M", "-m", "-x"],
      program: ["-e", "-E"],
      // The debugger's prompt runs Perl typed at it (`perl -de 0`).
      input: ["-d"],
      info: ["-v", "-V", "--version", "-h", "--help"],
    },
    ruby: {
      names: ["ruby", "irb", "jruby"],
      valued: ["-I", "-r", "-C", "-E", "-F", "-x"],
      program: ["-e"],
      input: [],
      info: ["-v", "--version", "-h", "--help"],
    },
    php: {
      names: ["php"],
      valued: ["-c", "-d", "-z", "-t"],
      program: ["-r", "-f", "-S", "-B", "-R", "-F", "-E"],
      input: ["-a", "--interactive"],
      info: ["-v", "--version", "-h", "--help", "-m", "-i", "--ini"],
    },
    // awk's `system()` runs shell commands: its program read from the input is a typed session.
    awk: {
      names: ["awk", "gawk", "mawk", "nawk"],
      valued: ["-v", "-F", "-i", "--include", "-l", "--load", "--assign", "--field-separator"],
      program: ["-f", "--file", "-e", "--source"],
      files: ["-f", "--file"],
      input: [],
      info: ["--version", "-V", "--help", "-h"],
    },
    pwsh: {
      names: ["pwsh", "powershell"],
      valued: ["-ExecutionPolicy", "-ep", "-WorkingDirectory", "-wd", "-ConfigurationName"]
        .concat(["-OutputFormat", "-of", "-InputFormat", "-if", "-WindowStyle", "-SettingsFile"]),
      program: ["-c", "-Command", "-File", "-f", "-EncodedCommand", "-e", "-ec"]
        .concat(["-CommandWithArgs", "-cwa"]),
      input: ["-NoExit", "-noe", "-Interactive", "-i"],
      info: ["-Version", "-v", "-Help", "-h", "-?"],
      // Its options are words, in any case, not clusters of letters.
      words: true,
    },
    // REPLs that run a script operand or `-e` code, and else read their input.
    other: {
      names: [
        "lua",
        "luajit",
        "tclsh",
        "wish",
        "expect",
        "R",
        "Rscript",
        "julia",
        "ghci",
        "guile",
        "racket",
        "xonsh",
        "nu",
        "elvish",
        "osh",
        "ysh",
        "bpython",
        "ptpython",
        "pry",
        "erl",
        "scala",
        "jshell",
        "clj",
        "clojure",
        "groovysh",
        "ocaml",
        "utop",
        "sbcl",
        "clisp",
        "kotlinc",
        "swift",
        "mongo",
      ],
      valued: ["-l", "-L"],
      program: ["-e", "--eval", "-c", "-f"],
      input: ["-i", "--interactive"],
      info: ["-v", "--version", "-h", "--help"],
    },
  },
  powerCommands: ["shutdown", "reboot", "poweroff", "halt"],
  powerVerbs: ["poweroff", "reboot", "halt", "kexec"],
};

/** Most words a brace expression may stand for before it counts as dangerous unread. */
const MAX_EXPANSIONS = 256;

/**
 * The words `word` may stand for: `{a,b}` alternatives (nested, at most
 * MAX_EXPANSIONS, past which "/" stands for the rest, so the rule blocks),
 * and for `${NAME:-word}` (`-`, `=`, with or without `:`) the default too.
 */
function expansions(word) {
  let words = [word];
  for (let round = 0; round < MAX_EXPANSIONS; round++) {
    const next = [];
    let changed = false;
    for (const w of words) {
      const brace = innermostBrace(w);
      if (brace === null) {
        next.push(w);
        continue;
      }
      changed = true;
      for (const part of brace.parts) {
        next.push(w.slice(0, brace.open) + part + w.slice(brace.close + 1));
      }
    }
    if (next.length > MAX_EXPANSIONS) return ["/"];
    words = next;
    if (!changed) break;
  }
  const out = [];
  for (const w of words) {
    out.push(w);
    const param = /^\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=]([^}]*)\}(.*)$/.exec(w);
    if (param) out.push(param[1] + param[2]);
  }
  return out;
}

/** The innermost `{a,b,...}` of `word` with a comma: its bounds and alternatives, or null. */
function innermostBrace(word) {
  for (let close = word.indexOf("}"); close !== -1; close = word.indexOf("}", close + 1)) {
    const open = word.lastIndexOf("{", close);
    if (open === -1) continue;
    const inner = word.slice(open + 1, close);
    if (inner.includes(",") && !(open > 0 && word[open - 1] === "$")) {
      return { open, close, parts: inner.split(",") };
    }
  }
  return null;
}

/** The working folder: `$PWD`, `${PWD}`, `$(pwd)`, `` `pwd -P` ``. */
const WORKING_FOLDER =
  /^(?:\$PWD|\$\{PWD\}|\$\(\s*pwd(?:\s+-[LP])?\s*\)|`\s*pwd(?:\s+-[LP])?\s*`)(?=\/|$)/;
/** The last working folder: `$OLDPWD`, `${OLDPWD}`. */
const LAST_FOLDER = /^(?:\$OLDPWD|\$\{OLDPWD\})(?=\/|$)/;
/**
 * A path computed from another, which may be any folder, `/` included: a slice, pattern removal
 * or indirection of a variable (`${HOME:0:1}`, `${HOME%/*}`, `${!NAME}`), or a command that prints
 * a path it is given (`$(dirname ~)`, `$(echo /)`). A plain `$NAME` stays an unknown name.
 */
const COMPUTED_PATH = new RegExp(
  "^(?:\\$\\{(?:![^}]*|[A-Za-z_][A-Za-z0-9_]*(?::(?![-=?+])|[#%/^,@])[^}]*)\\}" +
    "|(?:\\$\\(|`)\\s*(?:dirname|realpath|readlink|echo|printf|cd)\\b[^)`]*[)`])(?=\\/|$)" +
    // The same printing a substitution of its own: the whole word (`$(dirname "$(pwd)")`).
    "|^(?:\\$\\(|`)\\s*(?:dirname|realpath|readlink|echo|printf|cd)\\b[^`]*[)`]$",
);

/**
 * `path` made absolute where it can be (`$HOME` and `~` as `~`; relative to
 * `cwd` when the working folder is known), `.` and `..` resolved, and cut at
 * its first segment with a glob character, since a glob stands for every
 * name in the folder before it: `/usr/..` is `/`, `/[a-z]*` is `/`.
 */
function resolvePath(path, cwd) {
  let p = path.replace(/^(?:\$HOME|\$\{HOME(?:[:]?[-=?+][^}]*)?\})(?=\/|$)/, "~");
  // `~+`, `$PWD` and `$(pwd)` are the working folder; `~-` and `$OLDPWD` (the last one), `~N`
  // (the directory stack) and a path computed from another may be any.
  p = p.replace(WORKING_FOLDER, "~+").replace(LAST_FOLDER, "~-").replace(COMPUTED_PATH, "/");
  if (/^~\+(?=\/|$)/.test(p)) p = (cwd ?? ".") + p.slice(2);
  else if (/^~[-+]?\d*(?=\/|$)/.test(p) && p[1] !== "/" && p.length > 1) {
    p = "/" + p.slice(/^~[-+]?\d*/.exec(p)[0].length);
  }
  if (!p.startsWith("/") && !p.startsWith("~") && cwd !== null) p = cwd + "/" + p;
  const anchor = p.startsWith("/") ? "/" : (/^~[a-z_][a-z0-9_-]*|^~/.exec(p)?.[0] ?? "");
  const segments = [];
  for (const segment of p.slice(anchor.length).split("/")) {
    if (segment === "" || segment === ".") continue;
    if (/[*?[]/.test(segment)) break;
    if (segment === ".." && segments.length > 0 && segments[segments.length - 1] !== "..") {
      segments.pop();
    } else if (segment !== ".." || anchor !== "/") segments.push(segment);
  }
  return { anchor, segments };
}

/**
 * True when `word` may name `/`, the home directory, a system directory
 * (`CONFIG.systemDirs`) or a folder above the working one (`..`, `../..`):
 * `/`, `/*`, `~`, `$HOME/`, `${HOME:?}`, `/etc`, `/home/alice`, `//usr/./`,
 * `/usr/..`, `/[a-z]*`, `{/,}`, `~/..`; and a relative word taken from the
 * working folder `cwd` when it is known (`*` in `/`).
 */
function isRootish(word, cwd = null) {
  return remembered(ROOTISH, word, cwd, rootishWord);
}

/**
 * Answers of isRootish and isSystemPath by working folder and word: a command's words are looked
 * at again for each command started inside it (checkInnerCommands in run.mjs), and resolving one
 * costs the guard ~0.2M fuel, so 4,096 characters of `rm -r a rm -r a ...` took 6G unremembered.
 */
const ROOTISH = new Map();
const SYSTEM = new Map();
/** Answers remembered per kind; past it they are forgotten and looked up anew. */
const MAX_REMEMBERED = 4096;

function remembered(answers, word, cwd, look) {
  const key = (cwd === null ? "\u0001" : cwd) + "\0" + word;
  let answer = answers.get(key);
  if (answer === undefined) {
    if (answers.size >= MAX_REMEMBERED) answers.clear();
    answer = look(word, cwd);
    answers.set(key, answer);
  }
  return answer;
}

function rootishWord(word, cwd) {
  const listed = LISTED_PATHS.exec(word);
  if (listed !== null) {
    // `$(find / -maxdepth 0)`, `$(ls -d ~)`: the paths the command prints (see handedOn).
    const argv = [listed[1]].concat(listed[2].replace(/["']/g, "").split(/\s+/).filter((w) => w));
    const rest = word.slice(listed[0].length);
    return handedOn(argv).some((path) => isRootish(path + rest, cwd));
  }
  return expansions(word).some((candidate) =>
    rootishPath(resolvePath(candidate, cwd)) ||
    (cwd !== null && rootishPath(resolvePath(candidate, null)))
  );
}

/** A command substitution of `find` or `ls`, whose output is paths it was given or found. */
const LISTED_PATHS = /^(?:\$\(|`)\s*(find|ls)\b([^()`$<>|;&]*)[)`](?=\/|$)/;

/**
 * True when `word` may name `/`, a system directory or a folder above the working one: a
 * root-ish path (isRootish) other than a home directory (`~`, `/home/alice`).
 */
function isSystemPath(word, cwd = null) {
  return remembered(SYSTEM, word, cwd, systemWord);
}

function systemWord(word, cwd) {
  return expansions(word).some((candidate) =>
    systemPath(resolvePath(candidate, cwd)) ||
    (cwd !== null && systemPath(resolvePath(candidate, null)))
  );
}

function systemPath(path) {
  const { anchor, segments } = path;
  const home = (anchor.startsWith("~") && segments.length === 0) ||
    (anchor === "/" && segments.length === 2 && CONFIG.homeParents.includes("/" + segments[0]));
  return !home && rootishPath(path);
}

/** True when the resolved path `{ anchor, segments }` is root-ish (see isRootish). */
function rootishPath({ anchor, segments }) {
  if (anchor === "/") {
    if (segments.length === 0) return true;
    if (segments.length === 2 && CONFIG.homeParents.includes("/" + segments[0])) return true;
    return CONFIG.systemDirs.includes("/" + segments.join("/"));
  }
  if (anchor !== "") return segments.length === 0 || segments[0] === "..";
  return segments.length > 0 && segments.every((s) => s === "..");
}

function rmRoot({ argv, cwd }) {
  // `rm`, and the secure deleters that overwrite first (`srm -r`, `wipe -rf`).
  if (argv[0] !== "rm" && argv[0] !== "srm" && argv[0] !== "wipe") return false;
  const { options, operands } = splitOptions(argv.slice(1));
  if (options.includes("--no-preserve-root")) return true;
  return hasFlag(options, "rR", "--recursive") && operands.some((o) => isRootish(o, cwd));
}

/**
 * The paths `argv` hands on through a pipe: `echo`'s and `printf`'s words
 * (`printf '/\n'` hands on `/`), the folders `ls` lists and `find` walks (the
 * working folder when none is named); none for other programs.
 */
function handedOn(argv) {
  const words = argv.slice(1);
  if (argv[0] === "echo" || argv[0] === "printf") {
    return words.filter((w) => !w.startsWith("-"))
      .flatMap((w) => w.replace(/\\[ntr]/g, " ").split(/\s+/)).filter((w) => w !== "");
  }
  if (argv[0] === "ls") {
    const operands = words.filter((w) => !w.startsWith("-"));
    return operands.length > 0 ? operands : ["."];
  }
  if (argv[0] === "find") {
    const { paths } = findParts(argv);
    return paths.length > 0 ? paths : ["."];
  }
  return [];
}

/** The paths `find` walks (the words after its options) and its expression after them. */
function findParts(argv) {
  let i = 1;
  while (i < argv.length && /^-(?:[HLP]|O\d*)$/.test(argv[i])) i++;
  const paths = [];
  while (i < argv.length && !/^[-(!]/.test(argv[i])) paths.push(argv[i++]);
  return { paths, expression: argv.slice(i) };
}

/** `rsync -a --delete empty/ /`: makes a root-ish folder match another, deleting the rest. */
function rsyncDeleteRoot({ argv, cwd }) {
  if (argv[0] !== "rsync") return false;
  const { options, operands } = splitOptions(argv.slice(1));
  return options.some((o) => o.startsWith("--delete") || o === "--del") &&
    operands.length > 0 && isRootish(operands[operands.length - 1], cwd);
}

/** Commands that delete the files they are given. */
const FILE_DELETERS = ["rm", "unlink", "shred", "srm", "wipe"];

/** `find / -delete`, `find ~ -exec rm -rf {} +`: deletes from a rootish folder down. */
function findDeleteRoot({ argv, cwd }) {
  if (argv[0] !== "find") return false;
  const { paths, expression: rest } = findParts(argv);
  // What -exec runs, wrappers peeled (`-exec sudo rm -rf {} +`): a command that deletes.
  const deletes = rest.some((a, k) =>
    a === "-delete" ||
    (["-exec", "-execdir", "-ok", "-okdir"].includes(a) &&
      FILE_DELETERS.includes(effectiveArgv(rest.slice(k + 1, k + 8))[0]))
  );
  return deletes &&
    (paths.length === 0 ? isRootish(".", cwd) : paths.some((p) => isRootish(p, cwd)));
}

function worldWritable(mode) {
  if (/^[0-7]{3,4}$/.test(mode)) return (Number(mode[mode.length - 1]) & 2) !== 0;
  // Who (holding o or a), then + or =, then permissions holding w: read in
  // one pass (one regex with [oa] between two [ugoa]* backtracks
  // quadratically over a long mode word).
  return mode.split(",").some((part) => {
    const m = /^([ugoa]*)[+=]([rwxXst]*)/.exec(part);
    return m !== null && /[oa]/.test(m[1]) && m[2].includes("w");
  });
}

/**
 * `chmod` making a root-ish path world-writable; a recursive `chmod`, `chattr` or `setfacl` of
 * `/` or a system directory, whatever the mode (`chmod -R 755 /` takes set-user-id from `sudo`,
 * `chattr -R +i /etc` freezes it); a home directory's own modes are its user's to set.
 */
function chmodRoot({ argv, cwd }) {
  const [name, ...args] = argv;
  if (name === "chattr" || name === "setfacl") {
    // Their attributes start with + - = too (`chattr -R -i /`): any other word may be a path.
    const recursive = args.some((a) => /^-[A-Za-z]*R/.test(a) || a === "--recursive");
    return recursive && args.some((a) => !/^[-+=]/.test(a) && isSystemPath(a, cwd));
  }
  if (name !== "chmod") return false;
  const { options, operands } = splitOptions(args);
  if (operands.length < 2) return false;
  const paths = operands.slice(1);
  return (worldWritable(operands[0]) && paths.some((o) => isRootish(o, cwd))) ||
    (hasFlag(options, "R", "--recursive") && paths.some((o) => isSystemPath(o, cwd)));
}

function chownRoot({ argv, cwd }) {
  if (argv[0] !== "chown" && argv[0] !== "chgrp") return false;
  const { options, operands } = splitOptions(argv.slice(1));
  return hasFlag(options, "R", "--recursive") && operands.slice(1).some((o) => isRootish(o, cwd));
}

/**
 * Writes onto a disk device: a redirect or `tee` to one, a command that erases or partitions
 * what it is given (`shred`, `wipefs`, `blkdiscard`, ... `fdisk` and `parted` unless they only
 * list), or a copy whose destination is one (`cp /dev/zero /dev/sda`).
 */
function writesDisk({ argv, redirects }) {
  if (redirects.some((r) => r.op !== "<" && CONFIG.diskDevice.test(r.target))) return true;
  const [name, ...args] = argv;
  if (CONFIG.copiers.includes(name)) {
    const { operands } = splitOptions(args);
    return operands.length > 1 && CONFIG.diskDevice.test(operands[operands.length - 1]);
  }
  const writer = name === "tee" || CONFIG.diskWriters.includes(name);
  if (!writer && !CONFIG.diskEditors.includes(name)) return false;
  if (!args.some((a) => CONFIG.diskDevice.test(a.replace(/^--?[a-z-]+=/, "")))) return false;
  return writer || !args.some((a) => /^(?:-l|--list|-s|--show|print|-p)$/.test(a));
}

/**
 * Shuts down or reboots the machine, or ends every process: power commands, `init 0`,
 * `systemctl poweroff` or `isolate rescue.target`, `kill -9 -1` and `kill 1` (init), a write to
 * `/proc/sysrq-trigger`.
 */
function powerOff({ argv, redirects }) {
  const [name, ...args] = argv;
  if (CONFIG.powerCommands.includes(name)) return true;
  if (name === "init" || name === "telinit") return args.includes("0") || args.includes("6");
  if (name === "systemctl") {
    return args.some((a) =>
      CONFIG.powerVerbs.includes(a) ||
      /^(?:rescue|emergency|poweroff|reboot|halt|kexec)(?:\.target)?$/.test(a)
    );
  }
  if (name === "kill") {
    // The first word is the signal when it is an option (`-9`, `-KILL`, `-s KILL`; `-1` is HUP
    // there); the process ids follow: 1 is init, -1 every process.
    let i = 0;
    if (/^-[sn]$/.test(args[0] ?? "")) i = 2;
    else if (/^-./.test(args[0] ?? "") && args[0] !== "--") i = 1;
    return args.slice(i).some((a) => a === "1" || a === "-1");
  }
  if (name === "killall5") return true;
  if (name === "pkill" || name === "killall") return killsEveryProcess(name, args);
  const sysrq = (w) => /^\/proc\/sysrq-trigger$/.test(w);
  return redirects.some((r) => r.op !== "<" && sysrq(r.target)) ||
    (name === "tee" && args.some(sysrq));
}

/** Options of `pkill` and `killall` whose next word is their value. */
const KILL_VALUED = new Set([
  "-s",
  "--signal",
  "-u",
  "--euid",
  "-U",
  "--uid",
  "--user",
  "-g",
  "--pgroup",
  "-G",
  "--group",
  "-P",
  "--parent",
  "-t",
  "--terminal",
  "--session",
  "-F",
  "--pidfile",
  "--ns",
  "--nslist",
  "-o",
  "--older-than",
  "-y",
  "--younger-than",
  "-O",
  "--older",
  "-n",
  "--newer",
]);
/** Names no ordinary pattern matches all of. */
const SAMPLE_NAMES = ["systemd", "sshd", "bash", "x", "1"];

/**
 * `pkill` or `killall` ending every process it may signal: a pattern that matches every name
 * (`pkill -f .`, `killall -r .*`), or none with only root's processes chosen (`pkill -u root`,
 * `killall -u 0`); other choices (`-P PID`, `-u alice`, `-t pts/1`) stay allowed.
 */
function killsEveryProcess(name, args) {
  const users = [];
  let others = false;
  let regex = name === "pkill";
  const patterns = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === "--") {
      patterns.push(...args.slice(i + 1));
      break;
    }
    const long = /^(--[a-z-]+)=(.*)$/.exec(word);
    const option = long !== null ? long[1] : word;
    if (KILL_VALUED.has(option) || (long === null && /^-[uUgGPtFsOn]./.test(word))) {
      const value = long !== null
        ? long[2]
        : KILL_VALUED.has(word)
        ? args[++i] ?? ""
        : word.slice(2);
      if (/^(?:-u|--euid|-U|--uid|--user)$/.test(option) || /^-[uU]./.test(word)) {
        users.push(...value.split(","));
      } else if (!/^(?:-s|--signal)$/.test(option) && !/^-s./.test(word)) others = true;
    } else if (word === "-r" || word === "--regexp") regex = true;
    else if (!word.startsWith("-")) patterns.push(word);
  }
  if (others || users.some((u) => u !== "root" && u !== "0")) return false;
  if (patterns.length === 0) return users.length > 0;
  // Each pattern tried once (a command may repeat one hundreds of times).
  return regex && [...new Set(patterns)].some((pattern) => {
    try {
      const re = new RegExp(pattern);
      return SAMPLE_NAMES.every((sample) => re.test(sample));
    } catch {
      return false;
    }
  });
}

/**
 * `mv` (or `rsync --remove-source-files`) taking a root-ish folder away: `mv ~ /tmp/x`,
 * `mv /etc /etc.old`; or an archiver deleting what it archived (`tar --remove-files`, `zip -m`,
 * `7z a -sdel`).
 */
function moveRoot({ argv, cwd }) {
  const { options, operands } = splitOptions(argv.slice(1));
  if (argv[0] === "rsync") {
    return options.some((o) => o === "--remove-source-files" || o === "--remove-sent-files") &&
      operands.slice(0, -1).some((o) => isRootish(o, cwd));
  }
  const archived = archivedAndDeleted(argv);
  if (archived !== null) return archived.some((o) => isRootish(o, cwd));
  if (argv[0] !== "mv") return false;
  const target = options.find((o) => /^(?:-t|--target-directory)/.test(o));
  const sources = target === undefined ? operands.slice(0, -1) : operands;
  return sources.some((o) => isRootish(o, cwd));
}

/**
 * The paths an archiver deletes once archived (`tar --remove-files` its inputs and `-C` folders,
 * `zip -m` its inputs, `7z a -sdel` its inputs), or null when it deletes nothing.
 */
function archivedAndDeleted(argv) {
  const [name, ...args] = argv;
  if (name === "tar") {
    if (!args.includes("--remove-files")) return null;
    const inputs = [];
    for (let i = 0; i < args.length; i++) {
      const word = args[i];
      const long = /^--(file|directory)(?:=(.*))?$/.exec(word);
      if (i === 0 && /^[A-Za-z]+$/.test(word)) {
        if (word.includes("f")) i++; // `tar cf ARCHIVE ...`
      } else if (long !== null) {
        const value = long[2] ?? args[++i] ?? "";
        if (long[1] === "directory") inputs.push(value);
      } else if (/^-[A-Za-z]+/.test(word)) {
        // A cluster whose f or C takes the rest of the word or the next one.
        const at = word.search(/[fC]/);
        if (at === -1) continue;
        const value = word.slice(at + 1) || (args[++i] ?? "");
        if (word[at] === "C") inputs.push(value);
      } else if (!word.startsWith("-")) inputs.push(word);
    }
    return inputs;
  }
  if (name === "zip") {
    const moves = args.some((w) =>
      w === "--move" || (/^-[A-Za-z0-9]+$/.test(w) && w.includes("m"))
    );
    if (!moves) return null;
    const operands = [];
    for (let i = 0; i < args.length; i++) {
      const word = args[i];
      if (/^(?:-x|-i|--exclude|--include)$/.test(word)) break;
      if (/^-(?:b|n|t|tt|O|Z|P|e)$/.test(word)) i++;
      else if (!word.startsWith("-")) operands.push(word);
    }
    return operands.slice(1); // the first is the archive
  }
  if ((name === "7z" || name === "7za" || name === "7zz") && args.includes("-sdel")) {
    return args.filter((w) => !w.startsWith("-")).slice(2); // the command letter, the archive
  }
  return null;
}

function pushTarget(refspec) {
  const dst = refspec.slice(refspec.lastIndexOf(":") + 1).replace(/^\+/, "");
  return dst.replace(/^refs\/heads\//, "");
}

function forcePush({ argv }) {
  if (argv[0] !== "git") return false;
  let i = 1;
  while (i < argv.length && argv[i].startsWith("-")) i += /^-[Cc]$/.test(argv[i]) ? 2 : 1;
  if (argv[i] !== "push") return false;
  const { options, operands } = splitOptions(argv.slice(i + 1));
  const force = hasFlag(options, "f", "--force") ||
    options.some((o) => /^--force-(with-lease|if-includes)/.test(o));
  if (force && options.includes("--all")) return true;
  // `--mirror` force-updates and deletes every branch on the remote, `--prune` deletes those it
  // does not have here.
  if (options.includes("--mirror") || options.includes("--prune")) return true;
  // `--delete main`, `-d main` and `:main` delete the branch on the remote.
  const deletes = hasFlag(options, "d", "--delete");
  return operands.slice(1).some((spec) =>
    (force || deletes || spec.startsWith("+") || spec.startsWith(":")) &&
    CONFIG.protectedBranches.includes(pushTarget(spec))
  );
}

/**
 * True when `words` may hold `${NAME@P}` (or `${NAME[i]@P}`): a value expanded as a prompt, its
 * command substitutions run. Two plain searches per word (a regex looked past each `${` to the
 * end of a word without `}`, quadratic in the guard's fuel); a word holding both apart counts too.
 */
function promptExpansion(words) {
  return words.some((word) => word.includes("@P}") && word.includes("${"));
}

/** {@linkcode sessionOf}'s answers, by program name (a few hundred at most). */
const SESSION_OF = new Map();

/**
 * The CONFIG.sessions entry of the program `name`, or null; a name with a version after it
 * (`python3.12`, `tclsh8.6`, `lua5.4`) is its program's.
 */
function sessionOf(name) {
  if (name === undefined) return null;
  let session = SESSION_OF.get(name);
  if (session === undefined) {
    // The name without the digits, dots and dashes it ends with (a loop: a regex is quadratic).
    let end = name.length;
    while (end > 0 && "0123456789.-".includes(name[end - 1])) end--;
    const bare = name.slice(0, end);
    session = null;
    for (const kind of Object.keys(CONFIG.sessions)) {
      const names = CONFIG.sessions[kind].names;
      if (names.includes(name) || names.includes(bare)) {
        session = CONFIG.sessions[kind];
        break;
      }
    }
    if (SESSION_OF.size < 256) SESSION_OF.set(name, session);
  }
  return session;
}

/** True when one of `options` is a word of `list`, or a short-option cluster holds one. */
function given(word, list) {
  if (list.includes(word)) return true;
  if (!/^-[A-Za-z]{2,}$/.test(word)) return false;
  return word.slice(1).split("").some((letter) => list.includes("-" + letter));
}

/** The input named as a file: `-`, or a terminal or standard input path. */
const INPUT_FILE = /^-$|^\/dev\/(?:stdin|tty|fd\/0|pts\/\d+)$|^\/proc\/[^/]+\/fd\/0$/;

/**
 * Whether `argv` is `make` or `sed` reading its program from its input (`make -f -`, `sed -f
 * /dev/stdin`): a makefile's recipes are shell commands, and GNU sed's `e` runs one.
 */
function programFromInput(argv) {
  if (argv[0] !== "make" && argv[0] !== "gmake" && argv[0] !== "sed") return false;
  return argv.some((word, i) =>
    (/^(?:-f|--file|--makefile)$/.test(word) && INPUT_FILE.test(argv[i + 1] ?? "")) ||
    /^(?:--file|--makefile)=(?:-|\/dev\/stdin)$/.test(word)
  );
}

/**
 * True when `argv` runs a shell or interpreter that reads the commands it runs from its input:
 * no program given (no script, no `-c`/`-e`, a script of `-`), or told to read its input (`-s`,
 * `-i`), and not asked only for its version or help.
 */
function readsItsInput(argv) {
  const session = sessionOf(argv[0]);
  if (session === null) return false;
  let program = false;
  let input = false;
  // A shell's `-s` among its own options (not its script's arguments): read commands from input.
  let fromInput = false;
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i];
    if (word === "-") {
      input = true;
      break;
    }
    if (word === "--") {
      program = program || i + 1 < argv.length;
      break;
    }
    const is = session.words
      ? (list) => list.some((option) => option.toLowerCase() === word.toLowerCase())
      : (list) => list.includes(word);
    const has = session.words ? is : (list) => given(word, list);
    if (is(session.info)) return false;
    if (has(session.input)) input = true;
    if (session === CONFIG.sessions.shell && given(word, ["-s"])) fromInput = true;
    if (has(session.program)) {
      // A command word whose script is `-` (`deno run -`) reads it from the input.
      if (!word.startsWith("-") && argv[i + 1] === "-") {
        input = true;
        break;
      }
      if (/^-[A-Za-z]*m$/.test(word) && (session.prompts ?? []).includes(argv[i + 1])) {
        input = true;
      }
      // A program file that is the input (`awk -f -`, `gawk -f /dev/stdin`).
      if (is(session.files ?? []) && INPUT_FILE.test(argv[i + 1] ?? "")) input = true;
      program = true;
      i++;
      continue;
    }
    if (is(session.valued)) {
      i++;
      continue;
    }
    if (!/^[-+]/.test(word)) {
      // A script that is the input (`bash /dev/stdin`, `python3 /dev/tty`).
      if (INPUT_FILE.test(word)) input = true;
      else program = true;
      break;
    }
  }
  // A shell given a program runs it and exits, `-i` or not; an interpreter's `-i` reads after it.
  if (session === CONFIG.sessions.shell) return !program || fromInput;
  return !program || input;
}

/**
 * Where a command's input comes from, as far as the text says: a file, a here-document or a
 * string (`< f`, `<<EOF`, `<<< s`) is not typed; a terminal (`< /dev/tty`), a copy of another
 * descriptor (`<&3`), the agent's own input or a pipe from a command that passes its input on
 * (`cat | sh`) may be.
 */
const TERMINALS = /^\/dev\/(?:tty|pts\/|stdin$|fd\/0$|tcp\/|udp\/)|^\/proc\/[^/]+\/fd\/0$/;
function inputIsText(redirects) {
  return redirects.some((r) =>
    (r.fd === undefined || r.fd === 0) &&
    (r.op === "<<" || r.op === "<<-" || r.op === "<<<" ||
      ((r.op === "<" || r.op === "<>") && r.target !== "" && !TERMINALS.test(r.target)))
  );
}

/**
 * A command substitution that gives what is typed into the input: `$(cat)`, `$(cat -)`,
 * `$(head -n 1)`, `$(< /dev/stdin)`, `$(read -r l; ...)`, `$(dd bs=1)` (no file named). The
 * guard stands it for a variable `read` sets from the input, so `read x; eval "$x"` is caught
 * where the value is run as code.
 */
const INPUT_READ =
  /\$\(\s*(?:(?:cat|head|tail|tee|line)(?:\s+(?:-[^\s)]*|\d+))*(?:\s+(?:-|\/dev\/stdin))?|<\s*\/dev\/(?:stdin|tty|fd\/0)|read\b[^)]*|dd(?:\s+(?!if=)[^\s)]+)*)\s*\)|`\s*(?:cat|head|tail)(?:\s+-[^\s`]*)*\s*`/;
/** What {@link inputNames} stands for a value read from the input. */
const INPUT_VALUE = "$(cat)";

/** `read`'s options that take a value. */
const READ_VALUED = ["-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"];

/**
 * The variables `read` sets, in the pipeline `argvs`, from an input that may be typed into (not
 * a file, a here-document or a string, nor piped from commands that only print; `-u FD` too).
 */
function inputNames(argvs, commands) {
  const names = [];
  for (let k = 0; k < argvs.length; k++) {
    const argv = argvs[k];
    if (argv[0] !== "read" && argv[0] !== "mapfile" && argv[0] !== "readarray") continue;
    let fromFd = false;
    const own = [];
    for (let i = 1; i < argv.length; i++) {
      if (argv[i] === "-u") fromFd = true;
      if (READ_VALUED.includes(argv[i]) || (argv[0] !== "read" && /^-[CcdnOsu]$/.test(argv[i]))) {
        i++;
      } else if (!argv[i].startsWith("-")) own.push(argv[i]);
    }
    if (!fromFd && (inputIsText(commands[k].redirects) || fedText(argvs, commands, k))) continue;
    const valid = own.filter((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
    names.push(...(valid.length > 0 ? valid : [argv[0] === "read" ? "REPLY" : "MAPFILE"]));
  }
  return names;
}

/** Commands whose output never carries their own input. */
const PRODUCERS = ["echo", "printf", "seq", "true", "false", "yes", "ls", "date", "pwd"];

/**
 * The typed-session rule: a shell or interpreter started to read commands from the input the
 * agent can type into later (Codex's `write_stdin` reaches no hook), so what it runs could never
 * be checked. Its input is text when redirected from a file or a here-document, or piped from
 * commands that only print (`echo ... | sh`).
 */
function typedSession(argvs, commands) {
  for (let k = 0; k < argvs.length; k++) {
    // A command whose name is what is read from the input (`$(cat)`, or `$x` after `read x`).
    if (INPUT_READ.test(argvs[k][0] ?? "")) return true;
    // A program netcat or socat runs on what arrives from the network (a bind or reverse shell).
    if (networkPrograms(argvs[k]).some((text) => readsCommands(text.trim().split(/\s+/)))) {
      return true;
    }
    // An editor or a pager on the terminal reads its keys from there, whatever its input.
    if (readsTerminal(argvs[k], commands[k].redirects, k === argvs.length - 1)) return true;
    // What find runs inherits its input (`find . -maxdepth 0 -exec bash \;`).
    if (
      (findExecs(argvs[k]) ?? []).some((argv) =>
        readsCommands(argv) || readsTerminal(argv, [], true)
      )
    ) {
      return true;
    }
    const remote = remoteCommand(argvs[k]);
    const reads = readsItsInput(argvs[k]) || opensShell(argvs[k], commands[k].argv) ||
      containerSession(argvs[k]) || (remote !== null && readsCommands(remote)) ||
      cloudShell(argvs[k], readsCommands) || programFromInput(argvs[k]);
    if (!reads || inputIsText(commands[k].redirects)) continue;
    if (!fedText(argvs, commands, k)) return true;
  }
  return false;
}

/**
 * Whether command `k` of the pipeline is piped only what commands before it print of their own
 * (`echo`, `printf`, `cat FILE`, or input that is text), never what is typed.
 */
function fedText(argvs, commands, k) {
  return k > 0 &&
    argvs.slice(0, k).every((argv, j) =>
      PRODUCERS.includes(argv[0]) || inputIsText(commands[j].redirects) ||
      (argv[0] === "cat" && argv.length > 1 && !argv.slice(1).includes("-"))
    );
}

/** Whether `argv` runs, in a container it keeps reading its input, a program reading commands. */
function containerSession(argv) {
  const call = containerCall(argv);
  if (call === null || !call.interactive) return false;
  return call.command.length === 0 ? call.image : readsCommands(call.command);
}

/** Whether the command `words` (its program as written) is a shell or interpreter reading its input. */
function readsCommands(words) {
  if (words.length === 0 || words[0] === "") return false;
  const argv = [baseName(words[0])].concat(words.slice(1));
  return readsItsInput(argv) || opensShell(argv, words);
}

/** An interpreter other than the shells: a program of CONFIG.sessions (`python3`, `node`, ...). */
function isInterpreter(name) {
  const session = sessionOf(name);
  return session !== null && session !== CONFIG.sessions.shell;
}

/**
 * An interpreter's word that may take its code from what is piped into it: its input named
 * (`-`, `/dev/stdin`), a substitution (`-c "$(cat)"`), or code that runs text (`exec(...)`).
 */
const CODE_FROM_INPUT =
  /^-$|^\/dev\/(?:stdin|fd\/0)$|^\/proc\/self\/fd\/0$|\$\(|`|<\(|\b(?:exec|eval|system|popen|spawn|Function|subprocess|child_process)\b/;

/**
 * A download piped into a shell (`curl ... | sh`, whatever its options), or into an interpreter
 * that runs its input as code (`| python3`, `| python3 -`, `| deno run -`, `| node -e
 * "eval(...)"`); an interpreter given its program reads the download as data (`curl ... |
 * python3 -m json.tool`).
 */
function pipeToShell(argvs) {
  const from = argvs.findIndex((argv) => CONFIG.downloaders.includes(argv[0]));
  return from !== -1 && argvs.slice(from + 1).some((argv) =>
    CONFIG.shells.includes(argv[0]) ||
    (isInterpreter(argv[0]) &&
      (readsItsInput(argv) || argv.slice(1).some((w) => CODE_FROM_INPUT.test(w))))
  );
}

/** A download's output as a word: `$(curl ...)`, `` `wget ...` ``, `<(curl ...)`. */
const DOWNLOADED = new RegExp(
  "(?:<\\(|\\$\\(|`)\\s*(?:" + CONFIG.downloaders.join("|") + ")\\b",
);

/**
 * A shell, `eval`/`.` or an interpreter running a download: as its script or code (`bash -c
 * "$(curl ...)"`, `python3 <(curl ...)`, `node -e "$(wget -O- ...)"`) or as its input (`bash <
 * <(curl ...)`, `bash <<< "$(curl ...)"`). A shell's word must start with it (`bash -c "echo
 * $(curl ...)"` prints it); an interpreter's code may hold it anywhere.
 */
function runsDownload({ argv, redirects }) {
  const interpreter = isInterpreter(argv[0]);
  if (!interpreter && !RUNNERS.includes(argv[0])) return false;
  const input = redirects.some((r) =>
    (r.fd === undefined || r.fd === 0) && (r.op === "<" || r.op === "<<<") &&
    DOWNLOADED.test(r.target)
  );
  return input || argv.slice(1).some((word) => {
    const at = word.search(DOWNLOADED);
    return at === 0 || (at > 0 && interpreter);
  });
}

/**
 * The files `command` downloads to, as written: `curl -o F` (`-sSLo F`, `--output F`), `curl -O
 * URL` and `wget URL` (the URL's last segment), `wget -O F` (`--output-document=F`), or a
 * download's output redirected into one (`curl URL > F`).
 */
function downloadedFiles({ argv, redirects }) {
  const name = argv[0];
  if (!CONFIG.downloaders.includes(name)) return [];
  const files = redirects.filter((r) => (r.fd === undefined || r.fd === 1) && /^>[>|]?$/.test(r.op))
    .map((r) => r.target);
  // The option that names the file, and the one that names it after the URL (curl's -O).
  const [named, remote] = name === "wget" ? ["O", ""] : ["o", "O"];
  let byUrl = name === "wget";
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i];
    const long = /^--(output|output-document|remote-name)(?:=(.*))?$/.exec(word);
    if (long !== null) {
      if (long[1] === "remote-name") byUrl = true;
      else files.push(long[2] ?? argv[++i] ?? "");
    } else if (/^-[A-Za-z]/.test(word) && !word.startsWith("--")) {
      const at = word.indexOf(named, 1);
      if (remote !== "" && word.slice(1, at === -1 ? undefined : at).includes(remote)) byUrl = true;
      if (at !== -1) files.push(word.slice(at + 1) || (argv[++i] ?? ""));
    } else if (byUrl && /^(?:https?|ftps?):\/\//.test(word)) {
      const path = word.replace(/[?#].*$/, "");
      files.push(path.slice(path.lastIndexOf("/") + 1) || "index.html");
    }
  }
  return files.filter((f) => f !== "" && f !== "-");
}

/**
 * The script file `argv` runs, as written, or null: the program itself when named by a path
 * (`./install.sh`), a shell's or interpreter's script operand (`bash install.sh`, `python3
 * get.py`), or what `.`/`source` read.
 */
function scriptRun(argv) {
  const [name, ...args] = argv;
  if (name.includes("/")) return name;
  if (name === "." || name === "source") return args[0] ?? null;
  const session = sessionOf(name);
  if (session === null) return null;
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === "--") return args[i + 1] ?? null;
    if (given(word, session.program) || session.info.includes(word)) return null;
    if (session.valued.includes(word)) i++;
    else if (!/^[-+]/.test(word)) return word;
  }
  return null;
}

/** `path` as a key: relative to `cwd` where known, `./` and doubled `/` dropped. */
function fileKey(path, cwd) {
  const plain = path.replace(/\/+/g, "/").replace(/^(?:\.\/)+/, "");
  return plain.startsWith("/") || plain.startsWith("~") || cwd === null
    ? plain
    : (cwd + "/" + plain).replace(/\/+/g, "/");
}

/** Commands that run a script: the shells, `eval`, and `.`/`source` in the running one. */
const RUNNERS = CONFIG.shells.concat(["eval", "source", "."]);

// A function that runs itself twice in the background: `NAME(){ NAME|NAME& }`,
// or `function NAME { ... }`. Bash takes almost any word as a function's
// name (`:`, `1`, `f-x`, `f.y`), so NAME is any run of characters the shell
// does not treat as special. The name starts where such a run does (from
// inside one, the regex backtracked over the rest of it at every character:
// quadratic in the guard's fuel).
const NAME = "[^\\s(){}|&;<>'\"`$\\\\]+";
const BOMB_BODY = "\\s*\\{\\s*\\1\\s*\\|\\s*\\1\\s*&\\s*;?\\s*\\}";
const FORK_BOMB = new RegExp(`(?<!${NAME.slice(0, -1)})(${NAME})\\s*\\(\\s*\\)${BOMB_BODY}`);
const FORK_BOMB_KEYWORD = new RegExp(`\\bfunction\\s+(${NAME})\\s*(?:\\(\\s*\\))?${BOMB_BODY}`);

// zsh runs code from a glob qualifier attached to a word (`*(e:'cmd':)`, `*(.e:'cmd':)`,
// `*(+cmd)`) and from an expansion's `e` flag (`${(e)X}`, `${(e):-'$(cmd)'}`). Claude Code runs
// commands in the user's shell, zsh by default on macOS. A qualifier follows a word character or
// a glob, never `$`, `=`, a space or an operator (so `$(echo)`, `x=(a+b)` and `(e=1)` do not count).
const ZSH_QUALIFIER = /[^\s;&|<>($=]\([^()\s]*?(?:e[^\w\s()]|\+[A-Za-z_])/;

/**
 * True when an expansion's flags (`${(` up to its `)`) hold an `e`. One pass: the flags of
 * expansions that open before one `)` all end there, so each stretch is looked at once (a regex
 * looked past each `${(` to the end of a text without `)`, quadratic in the guard's fuel).
 */
function zshEvalFlag(text) {
  let at = text.indexOf("${(");
  while (at >= 0) {
    const end = text.indexOf(")", at);
    if (end < 0) return false;
    if (text.slice(at + 3, end).includes("e")) return true;
    at = text.indexOf("${(", end);
  }
  return false;
}

/**
 * True when `text` holds zsh code in a glob qualifier (outside quotes, where zsh globs) or an
 * `(e)` expansion flag (outside single quotes: double quotes expand it).
 */
function zshEval(text) {
  const unsingle = text.replace(/'[^']*'/g, "''");
  const unquoted = unsingle.replace(/"(?:[^"\\]|\\[\s\S])*"/g, '""');
  return ZSH_QUALIFIER.test(unquoted) || zshEvalFlag(unsingle);
}

const RULES = [
  {
    id: "zsh-eval",
    about: "zsh code in a glob qualifier or an (e) expansion flag",
    text: zshEval,
  },
  {
    id: "fork-bomb",
    about: "fork bomb",
    text: (t) => FORK_BOMB.test(t) || FORK_BOMB_KEYWORD.test(t),
  },
  {
    id: "rm-root",
    about: "recursive delete of /, a system directory or the home directory",
    command: rmRoot,
  },
  {
    id: "find-delete-root",
    about: "find deleting from /, a system directory or the home directory",
    command: findDeleteRoot,
  },
  {
    id: "rsync-delete-root",
    about: "rsync deleting in /, a system directory or the home directory",
    command: rsyncDeleteRoot,
  },
  {
    id: "mkfs",
    about: "formats a filesystem",
    command: ({ argv }) => /^mkfs(\..+)?$|^mke2fs$/.test(argv[0]),
  },
  {
    id: "dd-disk",
    about: "dd onto a raw disk device",
    command: ({ argv }) =>
      argv[0] === "dd" && argv.some((a) => /^of=/.test(a) && CONFIG.diskDevice.test(a.slice(3))),
  },
  { id: "disk-write", about: "writes onto a raw disk device", command: writesDisk },
  {
    id: "chmod-root",
    about:
      "changes the permissions of / or a system directory, or makes the home directory world-writable",
    command: chmodRoot,
  },
  {
    id: "chown-root",
    about: "recursive chown of /, a system directory or the home directory",
    command: chownRoot,
  },
  {
    id: "pipe-to-shell",
    about: "runs a downloaded script",
    pipeline: pipeToShell,
    command: runsDownload,
  },
  {
    id: "shutdown",
    about: "shuts down or reboots the machine, or ends every process",
    command: powerOff,
  },
  {
    id: "eval-data",
    about: "expands a variable's value as code (bash's ${NAME@P}), which the guard cannot read",
    words: promptExpansion,
  },
  {
    id: "typed-session",
    about:
      "starts a shell, interpreter, editor or pager that runs commands typed into it later, which no hook sees",
    session: typedSession,
  },
  {
    id: "move-root",
    about: "moves /, a system directory or the home directory away",
    command: moveRoot,
  },
  {
    id: "force-push-protected",
    about: "force push to, delete or mirror over a protected branch (" +
      CONFIG.protectedBranches.join(", ") +
      ")",
    command: forcePush,
  },
].filter((rule) => !CONFIG.disabled.includes(rule.id));

/** Most words the commands run by `find -exec` or `xargs` may add up to before they are too many. */
const MAX_RUN_BY_WORDS = 4096;

/** `words` with each word holding `token` replaced by one word per path (`of={}` -> `of=/a`, ...). */
function spread(words, token, paths) {
  return words.flatMap((w) => w.includes(token) ? paths.map((p) => w.split(token).join(p)) : [w]);
}

/**
 * The commands `find` runs with `-exec`, `-execdir`, `-ok` or `-okdir` (up to `;` or `+`), wrappers
 * peeled, `{}` standing for every folder it walks (the paths it finds lie in them and start with
 * them): `find / -exec chmod 777 {} +` runs `chmod 777 /`. Null when they add up to more than
 * MAX_RUN_BY_WORDS words (too many to check).
 */
function findExecs(argv) {
  if (argv[0] !== "find") return [];
  const { paths, expression } = findParts(argv);
  const walked = paths.length > 0 ? paths : ["."];
  const commands = [];
  let words = 0;
  for (let k = 0; k < expression.length; k++) {
    if (!["-exec", "-execdir", "-ok", "-okdir"].includes(expression[k])) continue;
    let end = k + 1;
    while (end < expression.length && expression[end] !== ";" && expression[end] !== "+") end++;
    const run = effectiveArgv(spread(expression.slice(k + 1, end), "{}", walked));
    if ((words += run.length) > MAX_RUN_BY_WORDS) return null;
    if (run.length > 0) commands.push(run);
    k = end;
  }
  return commands;
}

/**
 * The commands `xargs` runs in the pipeline `argvs` (`raw`: as written) on the paths piped to it
 * from `echo`, `printf`, `ls` or `find` (see handedOn): every path in place of the `-I` string,
 * else after the command's words. `echo / | xargs chmod -R 755` runs `chmod -R 755 /`. Null when
 * they add up to more than MAX_RUN_BY_WORDS words.
 */
function xargsRuns(argvs, raw) {
  const commands = [];
  let words = 0;
  for (let k = 1; k < argvs.length; k++) {
    const at = raw[k].findIndex((w) => w.slice(w.lastIndexOf("/") + 1) === "xargs");
    if (at === -1 || argvs[k].length === 0) continue;
    const options = raw[k].slice(at + 1);
    const i = options.findIndex((w) => w.startsWith("-I") || w === "-i");
    const token = i === -1
      ? null
      : options[i] === "-I"
      ? options[i + 1] ?? ""
      : options[i] === "-i"
      ? "{}"
      : options[i].slice(2);
    const paths = argvs.slice(0, k).flatMap(handedOn);
    const run = token !== null && token !== "" && argvs[k].some((w) => w.includes(token))
      ? spread(argvs[k], token, paths)
      : argvs[k].concat(paths);
    if ((words += run.length) > MAX_RUN_BY_WORDS) return null;
    commands.push(run);
  }
  return commands;
}

module.exports = {
  INPUT_VALUE,
  inputNames,
  readsCommands,
  xargsRuns,
  RULES,
  CONFIG,
  isRootish,
  downloadedFiles,
  scriptRun,
  fileKey,
  findExecs,
};
