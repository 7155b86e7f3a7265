// The launch side of the command's provider process, in the launcher: where a Terraform command
// runs in automation, its first launch starts one provider process for the command, and every
// launch of the command (this one included) becomes a session of it, relayed from here without
// starting Node.js. The provider process is the resident one's machinery bound to the command: it
// serves only launches whose parent is that terraform process and exits once that process is
// gone (src/resident/README.md, "The command's provider process"). Anything that does not work
// out returns, and the launcher then runs the runtime itself, as without it.
#define _GNU_SOURCE
#include "command-session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define COOKIE_KEY "TF_PLUGIN_MAGIC_COOKIE"
#define COOKIE_VALUE "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"
// The longest unix socket path every supported system binds whole (as src/resident/resident.ts).
#define MAX_SOCKET_PATH 103
// The longest message either side accepts (MAX_MESSAGE_BYTES in src/resident/resident.ts).
#define MAX_MESSAGE (1024 * 1024)
// How long a launch waits for the process it started, or for its answer, before serving itself.
#define READY_MS 5000
#define PARENT_POLL_MS 500

static volatile sig_atomic_t terminated = 0;

static void on_term(int sig) {
  (void)sig;
  terminated = 1;
}

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// Whether the launch runs in automation: TF_IN_AUTOMATION, or a CI system's own variable. A subset
// of what the provider itself recognises (src/resident/resident.ts, inAutomation): a CI that only
// the provider recognises gets a provider process per launch, as before.
static int in_automation(void) {
  static const char *vars[] = {"GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI",      "JENKINS_URL", "TF_BUILD",
                               "CONTINUOUS_INTEGRATION", "BUILD_ID", "BUILD_NUMBER", "RUN_ID", NULL};
  const char *tf = getenv("TF_IN_AUTOMATION");
  if (tf && tf[0] != '\0') return 1;
  const char *ci = getenv("CI");
  if (ci && ci[0] != '\0') return strcmp(ci, "false") != 0;
  for (int i = 0; vars[i]; i++) {
    const char *v = getenv(vars[i]);
    if (v && v[0] != '\0') return 1;
  }
  return 0;
}

// GPURENTAL_PROVIDER_RESIDENT left to its default ("auto", or unset). "on" and "off" are the
// provider's to apply, and so is a value it refuses.
static int mode_auto(void) {
  const char *v = getenv("GPURENTAL_PROVIDER_RESIDENT");
  if (!v) return 1;
  while (*v == ' ' || *v == '\t') v++;
  size_t n = strlen(v);
  while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t')) n--;
  return n == 0 || (n == 4 && strncasecmp(v, "auto", 4) == 0);
}

// The directory of the provider processes' sockets, as src/resident/resident.ts names it.
static int socket_dir(char *out, size_t size) {
  const char *chosen = getenv("GPURENTAL_PROVIDER_RESIDENT_DIR");
  // Absolute only: the process it starts binds from "/", and the launch connects from Terraform's
  // working directory.
  if (chosen && chosen[0] != '\0') return chosen[0] == '/' && snprintf(out, size, "%s", chosen) < (int)size;
  const char *tmp = NULL;
  for (const char *const *name = (const char *const[]){"TMPDIR", "TMP", "TEMP", NULL}; *name; name++) {
    tmp = getenv(*name);
    if (tmp && tmp[0] != '\0') break;
    tmp = NULL;
  }
  char base[PATH_MAX];
  if (snprintf(base, sizeof base, "%s", tmp && tmp[0] == '/' ? tmp : "/tmp") >= (int)sizeof base) return 0;
  size_t n = strlen(base);
  while (n > 1 && base[n - 1] == '/') base[--n] = '\0';
  return snprintf(out, size, "%s/gpurental-provider-run-%ld", base, (long)geteuid()) < (int)size;
}

// When the process `pid` started (clock ticks since boot, /proc/<pid>/stat's 22nd field), so a
// later process given the same pid never reaches a command process of the one before.
static int start_time(pid_t pid, unsigned long long *out) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  char *p = strrchr(text, ')');
  if (!p) return 0;
  // After the command's name, which may hold spaces: the space before each of fields 3 to 22.
  for (int field = 3; field <= 22; field++) {
    p = strchr(p + 1, ' ');
    if (!p) return 0;
  }
  return sscanf(p + 1, "%llu", out) == 1;
}

static int connect_to(const char *path) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  memcpy(addr.sun_path, path, strlen(path) + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  // A process that is stuck (stopped, or its backlog full) holds the launch no longer than it
  // waits for an answer; it then serves itself.
  struct timeval limit = {.tv_sec = READY_MS / 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0) return fd;
  int e = errno;
  close(fd);
  errno = e;
  return -1;
}

// Starts the command's provider process: the runtime with `--resident <socket> --owner <pid>`, in a
// session of its own (no terminal, not in Terraform's process group, so a Ctrl-C reaches only the
// launches, as with the resident process), with none of the launch's credentials: each session
// brings its launch's environment. Its own messages go to a log beside its socket.
static pid_t start_process(const char *runtime, const char *socket_path, pid_t owner) {
  static const char *keep[] = {"PATH=", "HOME=", "TMPDIR=", "LANG=", "NODE_", "GPURENTAL_PROVIDER_", NULL};
  char log_path[PATH_MAX], owner_text[32];
  if (snprintf(log_path, sizeof log_path, "%s.log", socket_path) >= (int)sizeof log_path) return -1;
  snprintf(owner_text, sizeof owner_text, "%ld", (long)owner);
  size_t count = 0;
  for (char **e = environ; *e; e++) count++;
  char **env = calloc(count + 1, sizeof *env);
  if (!env) return -1;
  size_t kept = 0;
  for (char **e = environ; *e; e++)
    for (int i = 0; keep[i]; i++)
      if (strncmp(*e, keep[i], strlen(keep[i])) == 0) {
        env[kept++] = *e;
        break;
      }
  pid_t pid = fork();
  if (pid != 0) {
    free(env);
    return pid;
  }
  setsid();
  // Appended, never truncated: a process already serving (one that won a race) may be writing it.
  int null = open("/dev/null", O_RDWR);
  int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
  if (null < 0 || log < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(log, 2) < 0) _exit(127);
  if (null > 2) close(null);
  if (log > 2) close(log);
  if (chdir("/") != 0) _exit(127);
  char *args[] = {(char *)runtime, "--resident", (char *)socket_path, "--owner", owner_text, NULL};
  execve(runtime, args, env);
  _exit(127);
}

// A growable buffer for the request and the lines read back.
struct text {
  char *data;
  size_t length, size;
};

static int put(struct text *t, const char *s, size_t n) {
  if (t->length + n + 1 > t->size) {
    size_t size = t->size ? t->size : 4096;
    while (t->length + n + 1 > size) size *= 2;
    if (size > 4 * MAX_MESSAGE) return 0;
    char *data = realloc(t->data, size);
    if (!data) return 0;
    t->data = data;
    t->size = size;
  }
  memcpy(t->data + t->length, s, n);
  t->length += n;
  t->data[t->length] = '\0';
  return 1;
}

// Appends s as a JSON string. Bytes from 0x80 on are passed as they are: valid UTF-8 reads the
// same, and Node.js reads anything else as it reads its own environment.
static int put_json(struct text *t, const char *s, size_t n) {
  if (!put(t, "\"", 1)) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[8];
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
      if (!put(t, esc, 2)) return 0;
    } else if (c < 0x20) {
      snprintf(esc, sizeof esc, "\\u%04x", c);
      if (!put(t, esc, 6)) return 0;
    } else if (!put(t, (const char *)&s[i], 1)) {
      return 0;
    }
  }
  return put(t, "\"", 1);
}

// The session request (SessionRequest in src/resident/resident.ts): the launch's environment,
// working directory, pid and parent.
static int request(struct text *t, pid_t ppid) {
  char cwd[PATH_MAX], num[64];
  if (!getcwd(cwd, sizeof cwd)) return 0;
  if (!put(t, "{\"t\":\"session\",\"env\":{", 22)) return 0;
  int first = 1;
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || eq == *e) continue;
    if (!first && !put(t, ",", 1)) return 0;
    first = 0;
    if (!put_json(t, *e, (size_t)(eq - *e)) || !put(t, ":", 1) || !put_json(t, eq + 1, strlen(eq + 1))) return 0;
  }
  if (!put(t, "},\"cwd\":", 8) || !put_json(t, cwd, strlen(cwd))) return 0;
  int n = snprintf(num, sizeof num, ",\"pid\":%ld,\"ppid\":%ld}\n", (long)getpid(), (long)ppid);
  return put(t, num, (size_t)n) && t->length <= MAX_MESSAGE;
}

// Writes all of s; to a socket without SIGPIPE, so that a provider process gone before the
// handshake leaves the launch to serve itself instead of killing it.
static int write_all(int fd, const char *s, size_t n) {
  struct stat st;
  int sock = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
  while (n > 0) {
    ssize_t w = sock ? send(fd, s, n, MSG_NOSIGNAL) : write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    s += w;
    n -= (size_t)w;
  }
  return 1;
}

static int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads the JSON string at s (after its opening quote) into out, as UTF-8; returns the position
// after its closing quote, or NULL.
static const char *json_string(const char *s, struct text *out) {
  while (*s && *s != '"') {
    if (*s != '\\') {
      if (!put(out, s++, 1)) return NULL;
      continue;
    }
    char c = s[1], one;
    if (c == '\0') return NULL;
    s += 2;
    if (c == 'u') {
      unsigned long code = 0;
      for (int i = 0; i < 4; i++) {
        int h = hex(s[i]);
        if (h < 0) return NULL;
        code = code * 16 + (unsigned long)h;
      }
      s += 4;
      if (code >= 0xd800 && code < 0xdc00 && s[0] == '\\' && s[1] == 'u') {
        unsigned long low = 0;
        for (int i = 0; i < 4; i++) {
          int h = hex(s[2 + i]);
          if (h < 0) return NULL;
          low = low * 16 + (unsigned long)h;
        }
        if (low >= 0xdc00 && low < 0xe000) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          s += 6;
        }
      }
      char utf8[4];
      size_t n;
      if (code < 0x80) utf8[0] = (char)code, n = 1;
      else if (code < 0x800) utf8[0] = (char)(0xc0 | (code >> 6)), utf8[1] = (char)(0x80 | (code & 0x3f)), n = 2;
      else if (code < 0x10000)
        utf8[0] = (char)(0xe0 | (code >> 12)), utf8[1] = (char)(0x80 | ((code >> 6) & 0x3f)),
        utf8[2] = (char)(0x80 | (code & 0x3f)), n = 3;
      else
        utf8[0] = (char)(0xf0 | (code >> 18)), utf8[1] = (char)(0x80 | ((code >> 12) & 0x3f)),
        utf8[2] = (char)(0x80 | ((code >> 6) & 0x3f)), utf8[3] = (char)(0x80 | (code & 0x3f)), n = 4;
      if (!put(out, utf8, n)) return NULL;
      continue;
    }
    switch (c) {
      case '"': one = '"'; break;
      case '\\': one = '\\'; break;
      case '/': one = '/'; break;
      case 'b': one = '\b'; break;
      case 'f': one = '\f'; break;
      case 'n': one = '\n'; break;
      case 'r': one = '\r'; break;
      case 't': one = '\t'; break;
      default: return NULL;
    }
    if (!put(out, &one, 1)) return NULL;
  }
  return *s == '"' ? s + 1 : NULL;
}

enum kind { BAD, READY, LOG, EXIT };

// One message of the provider process (SessionMessage in src/resident/resident.ts), as its
// JSON.stringify writes it: the fields in that order, nothing else.
static enum kind message(const char *line, struct text *value, int *code) {
  static const char ready[] = "{\"t\":\"ready\",\"handshake\":\"", log[] = "{\"t\":\"log\",\"line\":\"",
                    exit_[] = "{\"t\":\"exit\",\"code\":";
  value->length = 0;
  if (strncmp(line, exit_, sizeof exit_ - 1) == 0) {
    char *end;
    long n = strtol(line + sizeof exit_ - 1, &end, 10);
    if (strcmp(end, "}") != 0 || n < 0 || n > 255) return BAD;
    *code = (int)n;
    return EXIT;
  }
  enum kind k = strncmp(line, ready, sizeof ready - 1) == 0 ? READY
                : strncmp(line, log, sizeof log - 1) == 0   ? LOG
                                                            : BAD;
  if (k == BAD) return BAD;
  const char *rest = json_string(line + (k == READY ? sizeof ready : sizeof log) - 1, value);
  return rest && strcmp(rest, "}") == 0 ? k : BAD;
}

// Reads the next line into line (without its newline) from buffered input; 1 when there is one,
// 0 at the end, -1 on a line too long.
static int next_line(int fd, struct text *in, struct text *line, int wait_ms) {
  for (;;) {
    char *nl = in->length ? memchr(in->data, '\n', in->length) : NULL;
    if (nl) {
      size_t n = (size_t)(nl - in->data);
      line->length = 0;
      if (!put(line, in->data, n)) return -1;
      memmove(in->data, nl + 1, in->length - n - 1);
      in->length -= n + 1;
      return 1;
    }
    if (in->length > MAX_MESSAGE) return -1;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) {
      if (terminated) return 0;
      continue;
    }
    if (r == 0) return -2;
    char chunk[65536];
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    if (!put(in, chunk, (size_t)got)) return -1;
  }
}

// Relays the session: its log lines to stderr, until it ends (its exit code), the provider process
// goes away (1), SIGTERM or the parent gone (0, and closing the connection ends the session).
__attribute__((noreturn)) static void relay(int fd, struct text *in, pid_t ppid) {
  struct text line = {0}, value = {0};
  for (;;) {
    int r = next_line(fd, in, &line, PARENT_POLL_MS);
    if (terminated || getppid() != ppid) _exit(0);
    if (r == -2) continue;
    if (r != 1) _exit(1);
    int code = 1;
    enum kind k = message(line.data, &value, &code);
    if (k == EXIT) _exit(code);
    if (k == LOG) write_all(2, value.data, value.length);
  }
}

void serve_from_command_process(const char *runtime, const char *id, int argc, int (*private_dir)(const char *)) {
  const char *cookie = getenv(COOKIE_KEY);
  if (argc != 1 || !cookie || strcmp(cookie, COOKIE_VALUE) != 0 || !mode_auto() || !in_automation()) return;
  char dir[PATH_MAX], path[PATH_MAX];
  pid_t ppid = getppid();
  unsigned long long started;
  if (!socket_dir(dir, sizeof dir) || !start_time(ppid, &started)) return;
  if (snprintf(path, sizeof path, "%s/c%.16s-%ld-%llu.sock", dir, id, (long)ppid, started) > MAX_SOCKET_PATH)
    return;
  if (!private_dir(dir)) return;

  int fd = connect_to(path);
  pid_t child = -1;
  if (fd < 0) {
    if (errno != ENOENT && errno != ECONNREFUSED) return;
    child = start_process(runtime, path, ppid);
    if (child < 0) return;
    long long until = now_ms() + READY_MS;
    while (fd < 0 && now_ms() < until) {
      int status;
      // It exits at once when another launch's process took the name first; that one answers.
      int gone = child > 0 && waitpid(child, &status, WNOHANG) == child;
      if (gone) child = -1;
      struct timespec pause = {0, 5 * 1000 * 1000};
      nanosleep(&pause, NULL);
      fd = connect_to(path);
      if (fd < 0 && child < 0) break;
    }
    if (fd < 0) return;
  }

  struct text req = {0}, in = {0}, line = {0}, value = {0};
  int ok = request(&req, ppid) && write_all(fd, req.data, req.length);
  free(req.data);
  int code;
  if (ok && next_line(fd, &in, &line, READY_MS) == 1 && message(line.data, &value, &code) == READY) {
    free(line.data);
    // Ctrl-C is Terraform's to handle (it calls StopProvider, which reaches the session).
    signal(SIGINT, SIG_IGN);
    // A closed stdout or stderr (Terraform gone) is noticed by the parent watch, not a signal.
    signal(SIGPIPE, SIG_IGN);
    struct sigaction term = {.sa_handler = on_term};
    sigaction(SIGTERM, &term, NULL);
    if (!write_all(1, value.data, value.length)) _exit(1);
    free(value.data);
    relay(fd, &in, ppid);
  }
  free(in.data);
  free(line.data);
  free(value.data);
  close(fd);
}
