/*
 * dist/cli/hookbox, the bundled CLI's command (built by scripts/build_cli.ts
 * with the machine's C compiler; without one, a shell script does its first
 * part). An agent runs it once per event, so it does as little as it can:
 *
 * - Every command runs the bundled CLI in Deno (`deno run` of hookbox.js
 *   beside it, with the V8 flags it was built with and the checkout's own
 *   Deno cache), as the shell script would.
 * - A `dispatch` that goes through the user's daemon (`--daemon` or
 *   HOOKBOX_DAEMON=1; packages/cli/daemon.ts) is answered without Deno: it
 *   hands the call (its arguments, folder, stdin and the variables that
 *   change an answer) to the daemon of its environment (those variables)
 *   over its Unix socket, in a folder that must be this user's own with no
 *   access for others, and writes the answer. When the daemon cannot answer (none runs, an unsafe folder,
 *   another environment, input it does not take, a long call of another
 *   still running, a malformed or late answer), nothing has been written
 *   yet: the call runs in Deno instead, with the same arguments and the same
 *   stdin bytes. That CLI prints why the daemon is not used where it should
 *   say, and starts the daemon for the next call. HOOKBOX_DAEMON_CLIENT=off
 *   skips this part.
 * - A daemon that has not answered within DAEMON_WAIT_MS of the call's start
 *   (wedged, stopped, or trickling its answer) is given up: one line says so
 *   and the full CLI runs the call without asking the daemon again, its hooks
 *   ending by CALL_MS after the call's start (HOOKBOX_DAEMON_DEADLINE), so an
 *   agent that lets the action through once a hook call times out (Copilot
 *   after 30 s) gets the guards' answer first.
 *
 * Request (one connection, one call): "HBX1 <payload length>\n" and a
 * payload of fields, each "<byte length>:<bytes>": "dispatch", the folder,
 * stdin, the number of arguments, the arguments, then variable names and
 * values in pairs. Answer: "HBX1 <exit> <stdout length> <stderr length>\n"
 * and the bytes to write, or "HBX1 no\n".
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef HOOKBOX_V8_FLAGS
#error "build with -DHOOKBOX_V8_FLAGS='\"...\"' (scripts/build_cli.ts)"
#endif

/* Most stdin bytes handed to the daemon (as daemon_client.ts); more runs in the full CLI. */
#define MAX_STDIN (16UL * 1024 * 1024)
/* Most answer bytes taken from the daemon. */
#define MAX_ANSWER (64UL * 1024 * 1024)
/*
 * Longest wait for the daemon's whole answer from the call's start, ms, unless
 * HOOKBOX_DAEMON_WAIT_MS says otherwise (as daemon_client.ts): the daemon's 15 s
 * for the hooks of an event, and discovery.
 */
#define DAEMON_WAIT_MS 18000
/* A call the daemon is late for ends its hooks this long after its start, ms (as daemon_client.ts). */
#define CALL_MS 25000

extern char **environ;

struct buf {
  char *data;
  size_t len, cap;
};

/* Appends n bytes; 0, or -1 when out of memory. */
static int put(struct buf *b, const void *bytes, size_t n) {
  if (n > SIZE_MAX - b->len - 1) return -1;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
    char *grown = realloc(b->data, cap);
    if (!grown) return -1;
    b->data = grown;
    b->cap = cap;
  }
  if (n) memcpy(b->data + b->len, bytes, n);
  b->len += n;
  return 0;
}

/* Appends one field: its length, a colon, its bytes. */
static int field(struct buf *b, const char *bytes, size_t n) {
  char head[32];
  int h = snprintf(head, sizeof head, "%zu:", n);
  return put(b, head, (size_t)h) || put(b, bytes, n) ? -1 : 0;
}

static int write_all(int fd, const char *bytes, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, bytes, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    bytes += w;
    n -= (size_t)w;
  }
  return 0;
}

static char **args;        /* this program's arguments */
static struct buf input;   /* stdin read so far */
static int input_ended;    /* stdin was read to its end */

/* Runs the call in Deno after all (see its definition). Never returns. */
static void run_full_cli(void);

/*
 * The daemon answered but will not take this call (another environment, input it does not take,
 * busy with a long call): the full CLI runs it in its own process without asking again.
 */
static void run_full_cli_alone(void) {
  if (setenv("HOOKBOX_DAEMON", "0", 1) != 0) run_full_cli();
  run_full_cli();
}

/* This program's folder, every link resolved (the bundle's, dist/cli/); NULL if unknown. */
static char *own_folder(void) {
  char *real = realpath("/proc/self/exe", NULL);
  if (!real && strchr(args[0], '/')) real = realpath(args[0], NULL);
  if (!real) {
    /* Found through PATH, on a system without /proc: look where the shell looked. */
    const char *path = getenv("PATH");
    while (path && *path && !real) {
      const char *end = strchr(path, ':');
      size_t n = end ? (size_t)(end - path) : strlen(path);
      char candidate[PATH_MAX];
      if (n > 0 && (size_t)snprintf(candidate, sizeof candidate, "%.*s/%s", (int)n, path,
                                    args[0]) < sizeof candidate &&
          access(candidate, X_OK) == 0)
        real = realpath(candidate, NULL);
      path = end ? end + 1 : NULL;
    }
  }
  if (!real) return NULL;
  char *slash = strrchr(real, '/');
  if (slash == real) slash[1] = '\0';
  else if (slash) *slash = '\0';
  return real;
}

/* Copies of `a` and `b` joined; exits on no memory. */
static char *joined(const char *a, const char *b) {
  char *out = malloc(strlen(a) + strlen(b) + 1);
  if (!out) {
    fprintf(stderr, "hookbox: out of memory\n");
    _exit(2);
  }
  strcpy(out, a);
  strcat(out, b);
  return out;
}

/*
 * Runs the bundled CLI in Deno with this program's arguments (stdin as it
 * is now), as the shell form of this command would. Never returns.
 */
static void run_deno(void) {
  char *here = own_folder();
  if (!here) {
    fprintf(stderr, "hookbox: cannot find the folder of %s: %s\n", args[0], strerror(errno));
    /* An error the agent must not read as "allow": its blocking code for most agents. */
    _exit(2);
  }
  const char *cache = getenv("HOOKBOX_DENO_DIR");
  if (setenv("DENO_DIR", cache && *cache ? cache : joined(here, "/../../.cache/deno"), 1) != 0) {
    fprintf(stderr, "hookbox: cannot set DENO_DIR: %s\n", strerror(errno));
    _exit(2);
  }
  size_t count = 0;
  while (args[count]) count++;
  char **argv = calloc(count + 7, sizeof *argv);
  if (!argv) {
    fprintf(stderr, "hookbox: out of memory\n");
    _exit(2);
  }
  size_t at = 0;
  argv[at++] = "deno";
  argv[at++] = "run";
  argv[at++] = "-A";
  argv[at++] = "--no-config";
  argv[at++] = "--v8-flags=" HOOKBOX_V8_FLAGS;
  argv[at++] = joined(here, "/hookbox.js");
  for (size_t i = 1; i < count; i++) argv[at++] = args[i];
  argv[at] = NULL;
  signal(SIGPIPE, SIG_DFL);
  execvp("deno", argv);
  fprintf(stderr, "hookbox: cannot run deno: %s\n", strerror(errno));
  _exit(errno == ENOENT ? 127 : 2);
}

/*
 * Runs the call in Deno after all: the same arguments, stdin replayed (what
 * was read here, then the rest). Never returns.
 */
static void run_full_cli(void) {
  if (input.len > 0 || input_ended) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) goto fail;
    pid_t writer = fork();
    if (writer < 0) goto fail;
    if (writer == 0) {
      /* The full CLI's stdin: the bytes read here, then whatever is still unread. */
      close(pipe_fds[0]);
      if (write_all(pipe_fds[1], input.data, input.len) != 0) _exit(0);
      if (!input_ended) {
        char chunk[65536];
        for (;;) {
          ssize_t n = read(0, chunk, sizeof chunk);
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0 || write_all(pipe_fds[1], chunk, (size_t)n) != 0) break;
        }
      }
      _exit(0);
    }
    close(pipe_fds[1]);
    if (dup2(pipe_fds[0], 0) < 0) goto fail;
    close(pipe_fds[0]);
  }
  run_deno();
fail:
  fprintf(stderr, "hookbox: cannot hand stdin on to the CLI: %s\n", strerror(errno));
  _exit(2);
}

static int has_arg(const char *name) {
  for (char **a = args + 1; *a; a++)
    if (strcmp(*a, name) == 0) return 1;
  return 0;
}

/* The call goes to the daemon only as `hookbox dispatch` would send it (packages/cli/main.ts). */
static int for_daemon(void) {
  if (!args[1] || strcmp(args[1], "dispatch") != 0 || !has_arg("--agent")) return 0;
  const char *client = getenv("HOOKBOX_DAEMON_CLIENT");
  if (client && strcmp(client, "off") == 0) return 0;
  for (char **a = args + 1; *a; a++)
    if (strcmp(*a, "--remote") == 0 || strncmp(*a, "--remote=", 9) == 0) return 0;
  const char *remote = getenv("HOOKBOX_REMOTE");
  if (remote && *remote) return 0;
  const char *daemon = getenv("HOOKBOX_DAEMON");
  if (daemon && strcmp(daemon, "0") == 0) return 0;
  if (!has_arg("--daemon") && !(daemon && strcmp(daemon, "1") == 0)) return 0;
  return !isatty(0);
}

/* Reads stdin up to MAX_STDIN + 1 bytes; 0 when it all fits. */
static int read_input(void) {
  char chunk[65536];
  for (;;) {
    ssize_t n = read(0, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) {
      input_ended = 1;
      return 0;
    }
    if (put(&input, chunk, (size_t)n) != 0) return -1;
    if (input.len > MAX_STDIN) return -1;
  }
}

/* The variables that change an answer (as `fingerprint()` in daemon_client.ts). */
static int answer_changing(const char *name, size_t n) {
  static const char *const fixed[] = {"HOME", "PATH", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
    if (strlen(fixed[i]) == n && memcmp(name, fixed[i], n) == 0) return 1;
  return n >= 8 && memcmp(name, "HOOKBOX_", 8) == 0 &&
         !(n >= 14 && memcmp(name, "HOOKBOX_DAEMON", 14) == 0);
}

static int request(struct buf *payload) {
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return -1;
  size_t count = 0;
  for (char **a = args + 2; *a; a++)
    if (strcmp(*a, "--daemon") != 0) count++;
  char number[32];
  int digits = snprintf(number, sizeof number, "%zu", count);
  if (field(payload, "dispatch", 8) || field(payload, cwd, strlen(cwd)) ||
      field(payload, input.data ? input.data : "", input.len) ||
      field(payload, number, (size_t)digits))
    return -1;
  for (char **a = args + 2; *a; a++)
    if (strcmp(*a, "--daemon") != 0 && field(payload, *a, strlen(*a))) return -1;
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || !answer_changing(*e, (size_t)(eq - *e))) continue;
    if (field(payload, *e, (size_t)(eq - *e)) || field(payload, eq + 1, strlen(eq + 1)))
      return -1;
  }
  return 0;
}

/*
 * The environment's key in its daemon's socket name (as environmentKey() in
 * daemon_client.ts): the sum, modulo 2^64, of the 64-bit FNV-1a hash of each
 * answer-changing NAME=value.
 */
static uint64_t environment_key(void) {
  uint64_t sum = 0;
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || !answer_changing(*e, (size_t)(eq - *e))) continue;
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (const unsigned char *c = (const unsigned char *)*e; *c; c++)
      hash = (hash ^ *c) * 0x100000001b3ULL;
    sum += hash;
  }
  return sum;
}

/*
 * The socket of this environment's daemon, in the user's folder when it is
 * their own directory with no access for others.
 */
static int daemon_socket(struct sockaddr_un *addr) {
  char dir[sizeof addr->sun_path];
  const char *runtime = getenv("XDG_RUNTIME_DIR");
  int n = runtime && *runtime ? snprintf(dir, sizeof dir, "%s/hookbox", runtime)
                              : snprintf(dir, sizeof dir, "/tmp/hookbox-%lu",
                                         (unsigned long)getuid());
  if (n < 0 || (size_t)n >= sizeof dir) return -1;
  struct stat info;
  if (lstat(dir, &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != getuid() ||
      (info.st_mode & 077) != 0)
    return -1;
  memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  n = snprintf(addr->sun_path, sizeof addr->sun_path, "%s/daemon-%016llx.sock", dir,
               (unsigned long long)environment_key());
  return n < 0 || (size_t)n >= sizeof addr->sun_path ? -1 : 0;
}

/* Parses a decimal count of at most `max`; -1 when it is not one. */
static long long count_of(const char *text, const char **end, unsigned long long max) {
  unsigned long long value = 0;
  const char *p = text;
  if (*p < '0' || *p > '9') return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    value = value * 10 + (unsigned)(*p - '0');
    if (value > max) return -1;
  }
  *end = p;
  return (long long)value;
}

static long long clock_ms(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long long wait_ms = DAEMON_WAIT_MS; /* how long the daemon may take */
static long long started_ms;               /* the call's start, CLOCK_MONOTONIC */
static long long started_epoch_ms;         /* the same, CLOCK_REALTIME (what Deno's Date.now() reads) */

/* The wait the environment asks for: whole ms from 1 to 60000, else the default (one line says so). */
static void read_wait(void) {
  const char *given = getenv("HOOKBOX_DAEMON_WAIT_MS");
  if (!given || !*given) return;
  const char *end;
  long long ms = count_of(given, &end, 60000);
  if (ms >= 1 && *end == '\0') {
    wait_ms = ms;
    return;
  }
  fprintf(stderr, "hookbox: HOOKBOX_DAEMON_WAIT_MS must be whole ms from 1 to 60000, not \"%s\"; "
                  "using %d\n", given, DAEMON_WAIT_MS);
}

/*
 * The daemon has not answered in time: one line says so, and the full CLI
 * runs the call, its hooks ending by CALL_MS after the call's start; seeing
 * HOOKBOX_DAEMON_DEADLINE, it does not ask the daemon again but starts one in
 * its place. Never returns.
 */
static void run_full_cli_late(void) {
  fprintf(stderr, "hookbox: the daemon did not answer within %g s; this call runs in its own process\n",
          (double)wait_ms / 1000);
  char deadline[32];
  snprintf(deadline, sizeof deadline, "%lld", started_epoch_ms + CALL_MS);
  if (setenv("HOOKBOX_DAEMON_DEADLINE", deadline, 1) != 0) run_full_cli_alone();
  run_full_cli();
}

/* Waits until `sock` is ready for `events` within the wait; 0, or -1 when late. */
static int ready(int sock, short events) {
  for (;;) {
    long long left = started_ms + wait_ms - clock_ms(CLOCK_MONOTONIC);
    if (left <= 0) return -1;
    struct pollfd p = {.fd = sock, .events = events};
    int n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return -1;
    return 0; /* ready, or an error the read or write reports */
  }
}

/* Writes all of `bytes` to the daemon within the wait; 0, 1 when late, -1 on an error. */
static int send_all(int sock, const char *bytes, size_t n) {
  while (n > 0) {
    if (ready(sock, POLLOUT) != 0) return 1;
    ssize_t w = write(sock, bytes, n);
    if (w < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (w <= 0) return -1;
    bytes += w;
    n -= (size_t)w;
  }
  return 0;
}

int main(int argc, char **argv) {
  (void)argc;
  args = argv;
  if (!for_daemon()) run_deno();
  started_ms = clock_ms(CLOCK_MONOTONIC);
  started_epoch_ms = clock_ms(CLOCK_REALTIME);
  read_wait();
  signal(SIGPIPE, SIG_IGN);
  if (read_input() != 0) run_full_cli();
  struct sockaddr_un addr;
  if (daemon_socket(&addr) != 0) run_full_cli();

  struct buf payload = {0};
  if (request(&payload) != 0) run_full_cli();
  char head[48];
  int h = snprintf(head, sizeof head, "HBX1 %zu\n", payload.len);

  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  if (sock < 0) run_full_cli();
  /* A daemon that accepts no more connections holds connect(): bounded by the wait too. */
  long long left = started_ms + wait_ms - clock_ms(CLOCK_MONOTONIC);
  if (left <= 0) run_full_cli_late();
  struct timeval wait = {.tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000};
  setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
  if (connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINPROGRESS) run_full_cli_late();
    run_full_cli();
  }
  /* From here every read and write waits in poll(), against the call's one deadline. */
  int flags = fcntl(sock, F_GETFL);
  if (flags < 0 || fcntl(sock, F_SETFL, flags | O_NONBLOCK) != 0) run_full_cli();
  int sent = send_all(sock, head, (size_t)h);
  if (sent == 0) sent = send_all(sock, payload.data, payload.len);
  if (sent > 0) run_full_cli_late();
  if (sent < 0) run_full_cli();
  free(payload.data);

  struct buf answer = {0};
  char chunk[65536];
  for (;;) {
    if (ready(sock, POLLIN) != 0) run_full_cli_late();
    ssize_t n = read(sock, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) run_full_cli();
    if (n == 0) break;
    if (put(&answer, chunk, (size_t)n) != 0 || answer.len > MAX_ANSWER + 64) run_full_cli();
  }
  close(sock);
  if (put(&answer, "", 1) != 0) run_full_cli(); /* a terminator for the header's parse */
  answer.len--;

  const char *p = answer.data;
  if (answer.len < 5 || memcmp(p, "HBX1 ", 5) != 0) run_full_cli();
  if (strcmp(p, "HBX1 no\n") == 0) run_full_cli_alone();
  p += 5;
  long long code = count_of(p, &p, 255);
  if (code < 0 || *p++ != ' ') run_full_cli();
  long long out = count_of(p, &p, MAX_ANSWER);
  if (out < 0 || *p++ != ' ') run_full_cli();
  long long err = count_of(p, &p, MAX_ANSWER);
  if (err < 0 || *p++ != '\n') run_full_cli();
  size_t at = (size_t)(p - answer.data);
  if (answer.len - at != (size_t)out + (size_t)err) run_full_cli();
  if (write_all(1, answer.data + at, (size_t)out) != 0) return 2;
  if (write_all(2, answer.data + at + out, (size_t)err) != 0) return 2;
  return (int)code;
}
