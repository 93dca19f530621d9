"use strict";
/**
 * Terminal multiplexers and the programs that open a shell of their own. A
 * detached `tmux` or `screen` session runs a shell that later commands type
 * into (`tmux send-keys -t s 'rm -rf ~' Enter`, `screen -X stuff '...'`), and
 * their commands hand shell commands on (`tmux new -d 'cmd'`, `tmux run-shell
 * 'cmd'`): those texts are scripts for the guard to read. `su`, `sudo -i`,
 * `script`, `tmux attach` and the like open a shell reading what is typed
 * into it later, which no hook sees (rule "typed-session").
 */
const { baseName } = require("./commands.js");

/** tmux commands whose operands are a shell command, and the option letters that take a value. */
const TMUX_SHELL_COMMANDS = {
  "new-session": "cefFnstxy",
  "new": "cefFnstxy",
  "new-window": "ceFnt",
  "neww": "ceFnt",
  "split-window": "celtF",
  "splitw": "celtF",
  "respawn-pane": "cet",
  "respawnp": "cet",
  "respawn-window": "cet",
  "respawnw": "cet",
  "run-shell": "cdt",
  "run": "cdt",
  "pipe-pane": "t",
  "pipep": "t",
  "display-popup": "bcdehsStTwxy",
  "popup": "bcdehsStTwxy",
};
/** tmux's own options that take a value (`-c` is a shell command it runs). */
const TMUX_VALUED = "cfLST";
/** Keys `send-keys` names that end a line or stand for a character. */
const KEY_TEXT = { Enter: "\n", "C-m": "\n", "C-j": "\n", KPEnter: "\n", Space: " ", Tab: "\t" };

/**
 * `args` read as getopt reads them: option clusters up to the first operand
 * (or `--`); a letter of `valued` takes the rest of its word or the next one.
 */
function getopt(args, valued) {
  const flags = [];
  const values = {};
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i];
    if (word === "--") {
      i++;
      break;
    }
    if (!/^-./.test(word)) break;
    for (let j = 1; j < word.length; j++) {
      const letter = word[j];
      if (valued.includes(letter)) {
        values[letter] = j + 1 < word.length ? word.slice(j + 1) : args[++i] ?? "";
        break;
      }
      flags.push(letter);
    }
  }
  return { flags, values, operands: args.slice(i) };
}

/** tmux's command sequence `args` (after its own options) split at `;` words. */
function tmuxCommands(args) {
  const commands = [[]];
  for (const word of args) {
    if (word === ";") commands.push([]);
    else if (word.endsWith(";") && !word.endsWith("\\;")) {
      commands[commands.length - 1].push(word.slice(0, -1));
      commands.push([]);
    } else commands[commands.length - 1].push(word);
  }
  return commands.filter((c) => c.length > 0);
}

/** The text `send-keys` types: literal words as they are, named keys as their characters. */
function typedKeys(args) {
  const { flags, operands } = getopt(args, "Nt");
  if (flags.includes("X")) return null;
  const literal = flags.includes("l");
  return operands.map((key) => {
    if (literal) return key;
    if (Object.prototype.hasOwnProperty.call(KEY_TEXT, key)) return KEY_TEXT[key];
    // Another named key (`C-c`, `Escape`, `Up`) ends what was typed so far, as a line.
    return /^(?:[CMS]-.|[A-Z][A-Za-z0-9]+|F\d+)$/.test(key) && key.length > 1 ? "\n" : key;
  }).join("");
}

/** The scripts `tmux args...` runs in a shell or types into one. */
function tmuxScripts(args) {
  const own = getopt(args, TMUX_VALUED);
  const scripts = own.values.c !== undefined ? [own.values.c] : [];
  for (const [name, ...rest] of tmuxCommands(own.operands)) {
    if (name === "send-keys" || name === "send") {
      const text = typedKeys(rest);
      if (text !== null && text.trim() !== "") scripts.push(text);
    } else if (name === "if-shell" || name === "if") {
      // A shell command, then tmux commands to run on its result.
      const { operands } = getopt(rest, "t");
      if (operands.length > 0) scripts.push(operands[0]);
      for (const command of operands.slice(1)) scripts.push("tmux " + command);
    } else if (name === "source-file" || name === "source") {
      continue;
    } else if (Object.prototype.hasOwnProperty.call(TMUX_SHELL_COMMANDS, name)) {
      const { operands } = getopt(rest, TMUX_SHELL_COMMANDS[name]);
      if (operands.length > 0) scripts.push(operands.join(" "));
    }
  }
  return scripts;
}

/** True when `tmux args...` leaves a shell (or program) taking what is typed into it. */
function tmuxAttaches(args) {
  const own = getopt(args, TMUX_VALUED);
  if (own.values.c !== undefined || own.flags.includes("V")) return false;
  const commands = tmuxCommands(own.operands);
  if (commands.length === 0) return true;
  return commands.some(([name, ...rest]) => {
    if (/^(?:attach-session|attach|a|at)$/.test(name)) return true;
    if (name !== "new-session" && name !== "new") return false;
    // In the foreground, whatever it runs: its prefix key opens a window with a shell.
    return !getopt(rest, TMUX_SHELL_COMMANDS[name]).flags.includes("d");
  });
}

/** `screen`'s option words that take no value although a valued letter ends them. */
const SCREEN_WORDS = new Set(["-ls", "-list", "-wipe", "-version", "-ipv6"]);
/** Letters of `screen`'s options that take a value, in a word of their own or ending a cluster. */
const SCREEN_VALUED = "SpcehTts";

/** `screen args...` read: its options and the command it runs or the screen command of -X. */
function screenParts(args) {
  const flags = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i];
    if (word === "-X" || (/^-[a-zA-Z]*X$/.test(word) && !SCREEN_WORDS.has(word))) {
      flags.push(word.slice(0, -1));
      return { flags, command: [], screen: args.slice(i + 1) };
    }
    if (!word.startsWith("-")) return { flags, command: args.slice(i), screen: [] };
    flags.push(word);
    // `-S name`, `-dmS name`, `-Logfile f`: the next word is the value.
    if (
      word === "-Logfile" ||
      (!SCREEN_WORDS.has(word) && SCREEN_VALUED.includes(word[word.length - 1]))
    ) {
      i++;
    }
  }
  return { flags, command: [], screen: [] };
}

/** The scripts `screen args...` runs or types: `-X stuff TEXT`, `-X exec CMD`, its command. */
function screenScripts(args) {
  const { command, screen } = screenParts(args);
  if (command.length > 0) return [command.join(" ")];
  const [name, ...rest] = screen;
  if (name === "stuff") {
    return [rest.join(" ").replace(/\^M|\^J|\\r|\\n|\\015|\\012/g, "\n")];
  }
  if (name === "exec" || name === "screen") {
    const words = rest.filter((w, i) => !(i === 0 && /^[.!:|]+$/.test(w)));
    return words.length > 0 ? [words.join(" ")] : [];
  }
  return [];
}

/**
 * True when `screen args...` opens a shell in the foreground (no command, not detached) or
 * reattaches one (`-r`, `-x`, `-R`).
 */
function screenAttaches(args) {
  const { flags, screen } = screenParts(args);
  if (screen.length > 0) return false;
  const clusters = flags.filter((f) => !SCREEN_WORDS.has(f) && !f.startsWith("--"));
  if (flags.some((f) => SCREEN_WORDS.has(f) || /^--?(?:help|version)$/.test(f))) return false;
  if (clusters.some((f) => /[rRx]/.test(f.slice(1)))) return true;
  // In the foreground, whatever it runs: its command key opens a window with a shell.
  return !clusters.some((f) => /[dDmQv]/.test(f.slice(1)));
}

/** Whether `args` give `su`/`script` a command (`-c CMD`, `-cCMD`, `--command=CMD`). */
function hasCommandOption(args) {
  return args.some((w) =>
    w === "--command" || w.startsWith("--command=") || w === "--session-command" ||
    (/^-[A-Za-z]*c/.test(w) && !w.startsWith("--"))
  );
}

/** Letters of ssh's options that take a value. */
const SSH_VALUED = "BbcDEeFIiJLlmOoPpQRSWw";

/**
 * True when `ssh args...` opens a remote shell reading what is typed: a destination and no
 * command (options may follow the destination, as ssh reads them), and none of the options
 * that start no session (`-N`, `-W`, `-O`, `-G`, `-V`, `-Q`).
 */
function sshOpensShell(args) {
  const command = sshCommand(args);
  return command !== null && command.length === 0;
}

/**
 * The command `ssh args...` has run on the remote host, as its words (empty: none, a remote
 * shell), or null when ssh opens no session (no destination, `-N`, `-W`, `-O`, `-G`, `-V`,
 * `-Q`).
 */
function sshCommand(args) {
  const text = sshScript(args);
  // ssh joins the words with spaces for the remote shell: split again.
  return text === null ? null : text.split(/\s+/).filter((w) => w !== "");
}

/**
 * The text `ssh args...` has the remote host's shell run (its command's words joined with
 * spaces, as ssh sends them; empty: none), or null when ssh opens no session.
 */
function sshScript(args) {
  const own = getopt(args, SSH_VALUED);
  if (own.operands.length === 0) return null;
  const more = getopt(own.operands.slice(1), SSH_VALUED);
  const flags = own.flags.concat(more.flags);
  const values = Object.assign({}, own.values, more.values);
  if (flags.some((f) => "NGV".includes(f))) return null;
  if (values.W !== undefined || values.O !== undefined || values.Q !== undefined) return null;
  return more.operands.join(" ");
}

/**
 * The script `argv` has another host's shell run in its user's home directory (`ssh HOST
 * 'CMD'`), or null.
 */
function remoteScript(argv) {
  if (argv[0] !== "ssh") return null;
  const text = sshScript(argv.slice(1));
  return text === null || text.trim() === "" ? null : text;
}

/** The command `argv` has run on another host with this side's input (`ssh HOST CMD`), or null. */
function remoteCommand(argv) {
  if (argv[0] !== "ssh") return null;
  const command = sshCommand(argv.slice(1));
  return command === null || command.length === 0 ? null : command;
}

/** `mosh [options] HOST [-- COMMAND]`: a remote shell unless given a command. */
function moshOpensShell(args) {
  const end = args.indexOf("--");
  if (end >= 0) return end + 1 >= args.length;
  return args.some((w) => !w.startsWith("-"));
}

/** Container CLIs whose `run` and `exec` take docker's options. */
const CONTAINER_CLIS = ["docker", "podman", "nerdctl"];
/** Long options of `run`/`exec` that take no value (every other long option without `=` does). */
const CONTAINER_FLAGS = [
  "--rm",
  "--init",
  "--interactive",
  "--tty",
  "--detach",
  "--privileged",
  "--read-only",
  "--sig-proxy",
  "--no-healthcheck",
  "--oom-kill-disable",
  "--publish-all",
  "--help",
  "--disable-content-trust",
  "--quiet",
  "--use-api-socket",
  "--replace",
  "--rmi",
  "--no-hosts",
  "--http-proxy",
  "--systemd",
];
/** Letters of `run`/`exec`'s short options that take a value. */
const CONTAINER_VALUED = "acehlmpuvw";
/** The container CLIs' own options that take the next word (before `run`/`exec`). */
const CONTAINER_OWN_VALUED =
  /^(?:-[Hcl]|--(?:context|host|config|log-level|url|connection|identity|root|runroot|storage-driver|namespace|address))$/;

/**
 * `docker|podman|nerdctl [container] run|exec OPTIONS TARGET [COMMAND...]` and `kubectl
 * exec|run|attach|debug ... [-- COMMAND...]` read: whether the call keeps the input open for
 * what is typed (`-i`, `--interactive`, `--stdin`) and the command run in the container (empty:
 * the image's own, or none given), or null for another command.
 */
function containerCall(argv) {
  if (argv[0] === "oc" && argv.includes("rsh")) {
    // `oc rsh POD [COMMAND]`: a shell in the pod unless given a command (input kept open).
    const rest = argv.slice(argv.indexOf("rsh") + 1).filter((w) => !w.startsWith("-"));
    return { interactive: true, command: rest.slice(1), image: rest.length <= 1 };
  }
  if (argv[0] === "lxc" || argv[0] === "incus") {
    // `lxc exec C [--] COMMAND`, `lxc shell C`, `lxc console C`: the input is the command's.
    const sub = argv.slice(1).find((w) => !w.startsWith("-"));
    if (sub === "shell" || sub === "console") {
      return { interactive: true, command: [], image: true };
    }
    if (sub !== "exec") return null;
    const end = argv.indexOf("--");
    const rest = end < 0 ? argv.slice(argv.indexOf("exec") + 2) : argv.slice(end + 1);
    return { interactive: true, command: rest, image: false };
  }
  if (argv[0] === "lxc-attach") {
    const end = argv.indexOf("--");
    return { interactive: true, command: end < 0 ? [] : argv.slice(end + 1), image: end < 0 };
  }
  const compose = composeCall(argv);
  if (compose !== undefined) return compose;
  if (argv[0] === "kubectl" || argv[0] === "oc") {
    const end = argv.indexOf("--");
    const own = end < 0 ? argv.slice(1) : argv.slice(1, end);
    const sub = own.find((w) => !w.startsWith("-"));
    if (!["exec", "run", "attach", "debug"].includes(sub)) return null;
    const interactive = own.some((w) =>
      w === "--stdin" || w === "--stdin=true" || (/^-[a-zA-Z]+$/.test(w) && w.includes("i"))
    );
    return { interactive, command: end < 0 ? [] : argv.slice(end + 1), image: sub !== "exec" };
  }
  if (!CONTAINER_CLIS.includes(argv[0])) return null;
  let i = 1;
  for (; i < argv.length && argv[i].startsWith("-"); i++) {
    if (CONTAINER_OWN_VALUED.test(argv[i])) i++;
  }
  if (argv[i] === "container") i++;
  const sub = argv[i];
  if (sub === "attach") {
    // The container's own process, with what is typed as its input.
    return { interactive: !argv.includes("--no-stdin"), command: [], image: true };
  }
  if (sub === "start") {
    const words = argv.slice(i + 1);
    const attach = words.some((w) => w === "--attach" || /^-[a-zA-Z]*a/.test(w));
    const input = words.some((w) => w === "--interactive" || /^-[a-zA-Z]*i/.test(w));
    return attach && input ? { interactive: true, command: [], image: true } : null;
  }
  if (sub !== "run" && sub !== "exec") return null;
  let interactive = false;
  const target = firstOperand(argv, i + 1, (word) => {
    if (word.startsWith("--")) {
      const [name, value] = word.split("=", 2);
      if (name === "--interactive") interactive = value === undefined || value === "true";
      else if (value === undefined && !CONTAINER_FLAGS.includes(name)) return 1;
      return 0;
    }
    for (let j = 1; j < word.length; j++) {
      if (word[j] === "i") interactive = true;
      if (CONTAINER_VALUED.includes(word[j])) return j === word.length - 1 ? 1 : 0;
    }
    return 0;
  });
  if (target >= argv.length) return null;
  return { interactive, command: argv.slice(target + 1), image: sub === "run" };
}

/**
 * The index of the first operand of `argv` from `i` on (the word after a `--`), `option(word)`
 * called for each option word before it and returning how many words after it are its value.
 */
function firstOperand(argv, i, option) {
  for (; i < argv.length; i++) {
    const word = argv[i];
    if (word === "--") return i + 1;
    if (!/^-./.test(word)) return i;
    i += option(word);
  }
  return i;
}

/** Options of `docker compose` (before its command) that take the next word. */
const COMPOSE_OWN_VALUED =
  /^(?:-[fp]|--(?:file|project-name|project-directory|profile|env-file|ansi|progress|parallel))$/;
/** Options of `compose exec|run` that take the next word. */
const COMPOSE_VALUED =
  /^(?:-[euwvpl]|--(?:env|user|workdir|index|name|entrypoint|volume|publish|label|env-from-file|cap-add|cap-drop))$/;

/**
 * `docker compose|docker-compose|podman-compose exec|run [OPTIONS] SERVICE [COMMAND...]`
 * read as {@linkcode containerCall} reads `docker exec|run` (their input is kept open unless
 * `-i=false`/`--interactive=false`, `-d`, `--detach`); null for another compose command,
 * undefined for another program.
 */
function composeCall(argv) {
  let i;
  if (argv[0] === "docker-compose" || argv[0] === "podman-compose") i = 1;
  else if (CONTAINER_CLIS.includes(argv[0]) && argv.indexOf("compose") > 0) {
    i = argv.indexOf("compose") + 1;
  } else return undefined;
  for (; i < argv.length && argv[i].startsWith("-"); i++) {
    if (COMPOSE_OWN_VALUED.test(argv[i])) i++;
  }
  const sub = argv[i];
  if (sub !== "exec" && sub !== "run") return null;
  let interactive = true;
  const target = firstOperand(argv, i + 1, (word) => {
    if (/^(?:-d|--detach|-i=false|--interactive=false|--no-stdin)$/.test(word)) {
      interactive = false;
    }
    return COMPOSE_VALUED.test(word) ? 1 : 0;
  });
  if (target >= argv.length) return null;
  return { interactive, command: argv.slice(target + 1), image: sub === "run" };
}

/** The programs {@linkcode cloudShell} reads. */
const CLOUD_CLIS = new Set(["vagrant", "gcloud", "aws", "az", "fly", "flyctl", "heroku"])
  .add("toolbox").add("distrobox");
/** The programs {@linkcode consoleOf} reads, but Python's. */
const CONSOLE_PROGRAMS = new Set(["rails", "php", "lein", "sbt", "poetry", "pipenv", "devbox"])
  .add("hatch").add("pixi").add("nix-shell").add("nix");

/**
 * Whether `argv` opens a shell on a machine or environment a cloud or development CLI reaches
 * (`vagrant ssh`, `gcloud compute ssh VM`, `aws ssm start-session`, `az ssh vm`, `fly ssh
 * console`, `toolbox enter`, `distrobox enter`), with no command of its own, or runs a program
 * reading commands there (`heroku run bash`, `distrobox enter -- bash`).
 */
function cloudShell(argv, readsCommands) {
  if (!CLOUD_CLIS.has(argv[0])) return false;
  const [name, ...args] = argv;
  const words = args.filter((w) => !w.startsWith("-"));
  const has = (pattern) => args.some((w) => pattern.test(w));
  switch (name) {
    case "vagrant":
      return words[0] === "ssh" && !has(/^(?:-c|--command)(?:=|$)/);
    case "gcloud":
      return words.includes("ssh") &&
        (words.includes("compute") || words.includes("cloud-shell")) &&
        !has(/^--command(?:=|$)/);
    case "aws":
      return words[0] === "ssm" && words[1] === "start-session" && !has(/^--document-name(?:=|$)/);
    case "az":
      return words[0] === "ssh" && ["vm", "arc"].includes(words[1]);
    case "fly":
    case "flyctl":
      return words[0] === "ssh" && words[1] === "console" && !has(/^(?:-C|--command)(?:=|$)/);
    case "heroku": {
      if (words[0] !== "run") return false;
      const at = args.indexOf("run");
      const rest = [];
      for (let i = at + 1; i < args.length; i++) {
        if (/^(?:-a|--app|-r|--remote|-s|--size|-e|--env|--type)$/.test(args[i])) i++;
        else if (args[i] !== "--" && (rest.length > 0 || !args[i].startsWith("-"))) {
          rest.push(args[i]);
        }
      }
      return readsCommands(rest);
    }
    case "toolbox":
    case "distrobox": {
      if (words[0] !== "enter") return false;
      const end = args.indexOf("--");
      return end < 0 || readsCommands(args.slice(end + 1));
    }
    default:
      return false;
  }
}

/**
 * An application's own console (a REPL with the application loaded): `rails console`, `python
 * manage.py shell`, `php artisan tinker`, `lein repl`, `sbt console`; and an environment
 * manager's shell (`poetry shell`, `pipenv shell`, `nix-shell`, `nix develop`, `devbox shell`,
 * `hatch shell`, `pixi shell`) with no command of its own.
 */
function consoleOf(argv) {
  if (!CONSOLE_PROGRAMS.has(argv[0]) && !(argv[0] ?? "").startsWith("python")) return false;
  const [name, ...args] = argv;
  const words = args.filter((w) => !w.startsWith("-"));
  const has = (pattern) => args.some((w) => pattern.test(w));
  if (name === "rails") return ["console", "c", "dbconsole", "db"].includes(words[0]);
  if (/^python[\d.]*$/.test(name) && /(?:^|\/)manage\.py$/.test(words[0] ?? "")) {
    return ["shell", "dbshell", "shell_plus"].includes(words[1]);
  }
  if (name === "php" && /(?:^|\/)artisan$/.test(words[0] ?? "")) return words[1] === "tinker";
  if (name === "lein") return words[0] === "repl";
  if (name === "sbt") return words[0] === "console";
  if (["poetry", "pipenv", "devbox", "hatch", "pixi"].includes(name)) return words[0] === "shell";
  if (name === "nix-shell") return !has(/^--(?:run|command)$/);
  if (name === "nix") return words[0] === "develop" && !has(/^(?:-c|--command)$/);
  return false;
}

/** sqlite3's options that take the next word as their value. */
const SQLITE_VALUED = [
  "-cmd",
  "-init",
  "-separator",
  "-newline",
  "-nullvalue",
  "-vfs",
  "-lookaside",
  "-pagecache",
  "-mmap",
  "-heap",
  "-maxsize",
  "-escape",
];
/**
 * Programs with a prompt of their own that runs shell commands typed at it (sqlite3's `.shell`,
 * psql's and mysql's `\!`, gdb's and lldb's `shell`, ftp's and sftp's `!`, ed's `!`), each with
 * the options that give it its work instead (then it reads no prompt): true when it prompts.
 */
function promptsForShell(name, args) {
  const given = (pattern) => args.some((w) => pattern.test(w));
  switch (name) {
    case "sqlite3": {
      if (given(/^--?(?:version|help)$/)) return false;
      let operands = 0;
      for (let i = 0; i < args.length; i++) {
        if (SQLITE_VALUED.includes(args[i].replace(/^--/, "-"))) i++;
        else if (!args[i].startsWith("-")) operands++;
      }
      return operands <= 1;
    }
    case "psql":
      return !given(/^(?:-[a-zA-Z]*[cfl]|--(?:command|file|list|version|help)\b|-V$|-\?$)/);
    case "mysql":
    case "mariadb":
      return !given(/^(?:-[a-zA-Z]*e|--(?:execute|version|help)\b|-V$|-\?$)/);
    case "gdb":
      return !given(/^--?(?:batch|batch-silent|version|help|configuration)$/);
    case "lldb":
      return !given(/^(?:-b|--batch|-v|--version|-h|--help)$/);
    case "sftp":
      return !given(/^-[a-zA-Z]*b/);
    case "lftp":
      return !given(/^(?:-[cf]|--version|--help)$/);
    case "ftp":
    case "ed":
    case "red":
    case "ex":
    case "telnet":
      return !given(/^--?(?:version|help)$/);
    case "duckdb": {
      // `.shell` at its prompt; SQL as an operand or `-c`/`-s`/`-f` is its work.
      if (given(/^--?(?:version|help|[csf])$/)) return false;
      return args.filter((w) => !w.startsWith("-")).length <= 1;
    }
    case "iex":
      // Interactive Elixir: a prompt whatever it loads (`iex -S mix`).
      return !given(/^(?:--version|-v|--help|-h)$/);
    case "sqlplus":
      // `HOST` at its prompt, after any script it was given.
      return !given(/^-(?:v|h|version|help)$/i);
    case "dc":
      // `!` runs a shell command: it prompts unless given expressions or files.
      return !given(/^(?:-[ef]|--(?:expression|file|version|help)\b|-[Vh])/) &&
        args.every((w) => w.startsWith("-"));
    case "vi":
    case "vim":
    case "nvim":
      return vimExMode(args) && !args.includes("-Z");
    default:
      return false;
  }
}

/** Editors whose own commands run shell commands (`:!cmd`, `M-!`, `^T`), vim's names first. */
const VIMS = ["vi", "vim", "nvim", "view", "vimdiff", "nvimdiff"];
const EDITORS = VIMS.concat(["emacs", "nano", "pico", "micro", "joe", "mc", "mcedit"])
  .concat(["sudoedit", "visudo", "vipw", "vigr"]);
/** Pagers, whose `!cmd` runs a shell command, reading their keys from the terminal. */
const PAGERS = ["less", "more", "most", "pg"];

/**
 * Whether `argv` (with `redirects`; `last`: the pipeline's last command) is an editor or a pager
 * on the terminal, reading keys from it whatever its input (so a text input does not make it
 * safe) and running shell commands typed at it: every editor but in a restricted or batch mode
 * (`vim -Z`, `nano -R`, `emacs --batch`; `vim -es` reads its commands from its input, see
 * {@linkcode promptsForShell}), a pager whose output is the terminal (the pipeline's end, not
 * redirected).
 */
function readsTerminal(argv, redirects, last) {
  if (!EDITORS.includes(argv[0]) && !PAGERS.includes(argv[0]) && argv[0] !== "crontab") {
    return false;
  }
  const [name, ...args] = argv;
  const given = (pattern) => args.some((w) => pattern.test(w));
  if (given(/^--?(?:version|help)$/)) return false;
  if (VIMS.includes(name)) return !given(/^-Z$/) && !vimExMode(args);
  if (name === "emacs") return !given(/^--?(?:batch|script)$/);
  if (name === "nano" || name === "pico") return !given(/^(?:-[A-Za-z]*R|--restricted)$/);
  if (EDITORS.includes(name)) return true;
  if (name === "crontab") return args.includes("-e");
  if (!PAGERS.includes(name) || !last) return false;
  return !redirects.some((r) =>
    /^(?:>|>>|>\||&>|&>>)$/.test(r.op) && (r.fd === undefined || r.fd === 1)
  );
}

/** Whether vim's `args` start its silent ex mode (`-es`, `-Es`, `-e -s`): commands from its input. */
function vimExMode(args) {
  if (args.some((w) => /^-[eE]s$/.test(w))) return true;
  return args.some((w) => /^-[eE]$/.test(w)) && args.includes("-s");
}

const NETCATS = ["nc", "ncat", "netcat", "nc.traditional", "nc.openbsd"];

/**
 * The programs a command runs with its input from the network or from another address it
 * joins them to, as the text it gives them: netcat's `-e PROG`, `-c CMD`, `--exec`,
 * `--sh-exec`, `--lua-exec` (a bind or reverse shell), socat's `EXEC:` and `SYSTEM:` addresses
 * (up to their first option). Empty for another command.
 */
function networkPrograms(argv) {
  if (NETCATS.includes(argv[0])) {
    for (let i = 1; i < argv.length; i++) {
      const word = argv[i];
      if (word === "--") break;
      const long = /^--(?:exec|sh-exec|lua-exec)(?:=([\s\S]*))?$/.exec(word);
      if (long !== null) return [long[1] ?? argv[i + 1] ?? ""];
      if (/^-[A-Za-z0-9]+$/.test(word)) {
        const at = word.search(/[ec]/);
        if (at !== -1) return [word.slice(at + 1) || (argv[i + 1] ?? "")];
      }
    }
    return [];
  }
  if (argv[0] !== "socat") return [];
  return argv.slice(1).map((word) => /^(?:exec|system):([^,]*)/i.exec(word)?.[1])
    .filter((text) => text !== undefined);
}

/** Wrappers (`commands.js`) that start the user's shell when given no command. */
const SHELL_OPENERS = ["chroot", "unshare", "pkexec", "nsenter", "fakeroot", "firejail", "proot"];

/**
 * True when the command (its argv as run, `raw` its words as written) opens a shell that reads
 * what is typed into it later: `su`, `sudo -i`, `sudo -s`, `doas -s`, `chroot DIR`, `unshare`,
 * `nsenter -t 1 -m`, `script`, `login`, `machinectl shell`, `pkexec`, `tmux`, `tmux attach`,
 * `screen`, `screen -r`, `ssh HOST`, `mosh HOST`; none when given a command to run instead.
 */
function opensShell(argv, raw) {
  if (argv.length === 0) {
    // Nothing runs after the wrappers: those that then start a shell.
    return raw.some((word, i) => {
      const name = baseName(word);
      if (SHELL_OPENERS.includes(name)) return true;
      if (name === "systemd-run") return raw.includes("--shell") || raw.includes("-S");
      if (name !== "sudo" && name !== "doas") return false;
      return raw.slice(i + 1).some((w) =>
        w === "--login" || w === "--shell" || (/^-[A-Za-z]*[is]/.test(w) && !w.startsWith("--"))
      );
    });
  }
  const [name, ...args] = argv;
  if (name === "su" || name === "script") return !hasCommandOption(args);
  if (name === "login") return true;
  if (name === "ssh") return sshOpensShell(args);
  if (promptsForShell(name, args) || consoleOf(argv)) return true;
  if (name === "mosh") return moshOpensShell(args);
  if (name === "machinectl") return args.includes("shell") || args.includes("login");
  if (name === "tmux") return tmuxAttaches(args);
  if (name === "screen") return screenAttaches(args);
  return false;
}

/** The scripts a terminal multiplexer command runs or types (see the module doc). */
function terminalScripts(argv) {
  if (argv[0] === "tmux") return tmuxScripts(argv.slice(1));
  if (argv[0] === "screen") return screenScripts(argv.slice(1));
  return [];
}

module.exports = {
  opensShell,
  terminalScripts,
  containerCall,
  networkPrograms,
  remoteCommand,
  remoteScript,
  readsTerminal,
  cloudShell,
};
