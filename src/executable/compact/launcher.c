// The compact form of the standalone provider executable (linux): this small launcher, followed
// by the provider executable (the Node.js SEA) compressed with xz, followed by a trailer.
//
// Terraform hashes every byte of an installed provider on every command, so the file it installs
// is kept small: the launcher unpacks the runtime once per user into a private cache directory,
// named by the runtime's SHA-256, and from then on only checks it and executes it in its own
// place (the process id, arguments, environment and open descriptors stay Terraform's). Design
// and choices: README.md beside this file.
//
// Trailer (the file's last 104 bytes):
//   16 bytes  "gpurental-rt-v1\n"
//    8 bytes  offset of the xz stream (little-endian)
//    8 bytes  length of the xz stream
//    8 bytes  length of the runtime once unpacked
//   64 bytes  SHA-256 of the runtime, lowercase hex (the xz stream carries it as its check too)
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NAME "terraform-provider-gpurental"
#define MAGIC "gpurental-rt-v1\n"
#define TRAILER_SIZE 104
#define ID_LENGTH 64
// Unpacked runtimes of other versions are removed once this old (at the next unpack).
#define STALE_SECONDS (30L * 24 * 3600)
#define CHUNK (1 << 20)

extern char **environ;

struct payload {
  int fd;
  uint64_t offset;
  uint64_t length;
  uint64_t runtime_size;
  char id[ID_LENGTH + 1];
};

// Why each candidate directory was not used, for the message when none is.
static char reasons[4096];

static void note(const char *fmt, ...) {
  size_t used = strlen(reasons);
  if (used + 2 >= sizeof reasons) return;
  if (used > 0) reasons[used++] = ';', reasons[used++] = ' ', reasons[used] = '\0';
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reasons + used, sizeof reasons - used, fmt, ap);
  va_end(ap);
}

// Says why it cannot start, on stderr, and, when Terraform started it, also as the first line of
// stdout: Terraform shows a provider's stderr only in its debug log, but it prints a first stdout
// line that is not the handshake ("Unrecognized remote plugin message: ...").
static int fail(const char *fmt, ...) {
  char message[sizeof reasons + 256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  fprintf(stderr, NAME ": %s\n", message);
  if (getenv("TF_PLUGIN_MAGIC_COOKIE")) {
    printf(NAME ": %s\n", message);
    fflush(stdout);
  }
  return 1;
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static int read_payload(struct payload *p, const char *argv0) {
  p->fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  // Without /proc (some chroots), the path it was started by, as Terraform starts it: a path.
  if (p->fd < 0 && argv0 && strchr(argv0, '/')) p->fd = open(argv0, O_RDONLY | O_CLOEXEC);
  if (p->fd < 0) return fail("cannot open its own executable (/proc/self/exe): %s", strerror(errno));
  struct stat st;
  unsigned char t[TRAILER_SIZE];
  if (fstat(p->fd, &st) != 0 || st.st_size < TRAILER_SIZE ||
      pread(p->fd, t, TRAILER_SIZE, st.st_size - TRAILER_SIZE) != TRAILER_SIZE)
    return fail("cannot read its own trailer: the file is damaged; install the provider again");
  if (memcmp(t, MAGIC, 16) != 0)
    return fail("its runtime is missing (no trailer): the file is damaged; install the provider again");
  p->offset = le64(t + 16);
  p->length = le64(t + 24);
  p->runtime_size = le64(t + 32);
  memcpy(p->id, t + 40, ID_LENGTH);
  p->id[ID_LENGTH] = '\0';
  for (int i = 0; i < ID_LENGTH; i++)
    if (!strchr("0123456789abcdef", p->id[i]) || p->id[i] == '\0')
      return fail("its trailer names no runtime: the file is damaged; install the provider again");
  uint64_t size = (uint64_t)st.st_size;
  if (p->offset > size || p->length > size - p->offset || p->offset + p->length > size - TRAILER_SIZE)
    return fail("its trailer points outside the file: the file is damaged; install the provider again");
  return 0;
}

// An existing directory (a real path) that only this user or root can change: it and every
// directory above it belong to one of them and cannot be written by others unless sticky (/tmp).
static int trusted_chain(const char *real) {
  uid_t me = geteuid();
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s", real);
  for (;;) {
    struct stat st;
    if (stat(path, &st) != 0) {
      note("%s: %s", path, strerror(errno));
      return 0;
    }
    if ((st.st_uid != me && st.st_uid != 0) || ((st.st_mode & 022) != 0 && !(st.st_mode & S_ISVTX))) {
      note("%s can be written by other users", path);
      return 0;
    }
    char *slash = strrchr(path, '/');
    if (!slash || (slash == path && path[1] == '\0')) return 1;
    if (slash == path) slash[1] = '\0';
    else *slash = '\0';
  }
}

// A directory the runtime may be run from: this user's, private (mode 0700 or stricter), under a
// trusted chain. Anyone who could write there could replace what runs as the provider.
static int trusted_dir(const char *dir) {
  char real[PATH_MAX];
  struct stat st;
  if (!realpath(dir, real)) {
    note("%s: %s", dir, strerror(errno));
    return 0;
  }
  if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
    note("%s is not a directory of this user's that only this user can enter", real);
    return 0;
  }
  return trusted_chain(real);
}

// Creates dir and its missing parents (mode 0700), but only under a trusted chain: nothing is made
// in another user's directory (a HOME kept across sudo). True when dir is then trusted.
static int private_dir(const char *dir) {
  char path[PATH_MAX], real[PATH_MAX];
  size_t length = strlen(dir);
  if (length >= sizeof path) {
    note("%s: path too long", dir);
    return 0;
  }
  memcpy(path, dir, length + 1);
  // The deepest part of dir that exists.
  size_t existing = length;
  struct stat st;
  while (stat(path, &st) != 0) {
    char *slash = strrchr(path, '/');
    if (errno != ENOENT || !slash) {
      note("%s: %s", path, strerror(errno));
      return 0;
    }
    existing = slash == path ? 1 : (size_t)(slash - path);
    path[existing] = '\0';
  }
  if (!realpath(path, real) || !trusted_chain(real)) return 0;
  memcpy(path, dir, length + 1);
  for (size_t i = existing + 1; i <= length; i++) {
    if (path[i] != '/' && path[i] != '\0') continue;
    char c = path[i];
    path[i] = '\0';
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
      note("cannot create %s: %s", path, strerror(errno));
      return 0;
    }
    path[i] = c;
  }
  return trusted_dir(path);
}

// The runtime at file is complete and this user's alone.
static int runtime_ready(const char *file, const struct payload *p) {
  struct stat st;
  return stat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
         (st.st_mode & 022) == 0 && (uint64_t)st.st_size == p->runtime_size;
}

// Decompresses the runtime into out; the xz check (SHA-256) and the size must both hold.
static int unpack(const struct payload *p, int out, const char **why) {
  lzma_stream s = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) {
    *why = "cannot start the decompressor";
    return -1;
  }
  static uint8_t in[CHUNK], buf[CHUNK];
  uint64_t pos = 0, written = 0;
  lzma_ret ret = LZMA_OK;
  int rc = -1;
  *why = "the runtime is damaged; install the provider again";
  while (ret == LZMA_OK) {
    if (s.avail_in == 0 && pos < p->length) {
      size_t want = p->length - pos < CHUNK ? (size_t)(p->length - pos) : CHUNK;
      ssize_t got = pread(p->fd, in, want, (off_t)(p->offset + pos));
      if (got <= 0) {
        *why = "cannot read its own file";
        goto done;
      }
      pos += (uint64_t)got;
      s.next_in = in;
      s.avail_in = (size_t)got;
    }
    s.next_out = buf;
    s.avail_out = CHUNK;
    ret = lzma_code(&s, pos < p->length ? LZMA_RUN : LZMA_FINISH);
    size_t n = CHUNK - s.avail_out;
    for (size_t done = 0; done < n;) {
      ssize_t w = write(out, buf + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        *why = strerror(errno);
        goto done;
      }
      done += (size_t)w;
    }
    written += n;
    if (written > p->runtime_size) goto done;
  }
  if (ret == LZMA_STREAM_END && written == p->runtime_size && pos == p->length && s.avail_in == 0) rc = 0;
done:
  lzma_end(&s);
  return rc;
}

// Removes runtimes of other versions unpacked long ago and temp files of unpacks that died.
static void prune(const char *dir, const char *keep) {
  DIR *d = opendir(dir);
  if (!d) return;
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d))) {
    int runtime = strncmp(e->d_name, NAME "-", sizeof NAME) == 0 && strcmp(e->d_name, keep) != 0;
    int temp = strncmp(e->d_name, ".unpack-", 8) == 0;
    struct stat st;
    if (!(runtime || temp) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (now - st.st_mtime > (temp ? 24 * 3600 : STALE_SECONDS)) unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
}

// Unpacks the runtime into dir as file: a temp file written, synced, made read-only, then renamed
// into place, so that a reader never sees a part and two first launches at once both succeed.
static int install(const struct payload *p, const char *dir, const char *file, const char *name) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/.unpack-%.16s-%ld", dir, p->id, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
  if (fd < 0) {
    note("cannot write in %s: %s", dir, strerror(errno));
    return -1;
  }
  const char *why = NULL;
  int ok = unpack(p, fd, &why) == 0 && fsync(fd) == 0 && fchmod(fd, 0500) == 0;
  if (!ok && !why) why = strerror(errno);
  if (close(fd) != 0 && ok) ok = 0, why = strerror(errno);
  if (ok && rename(tmp, file) != 0) ok = 0, why = strerror(errno);
  if (!ok) {
    unlink(tmp);
    note("cannot unpack into %s: %s", dir, why);
    return -1;
  }
  prune(dir, name);
  return 0;
}

// Runs the runtime from dir, unpacking it first if needed. Returns only when that did not work.
static void run_from(const struct payload *p, const char *dir, char **argv) {
  if (!private_dir(dir)) return;
  char name[128], file[PATH_MAX];
  snprintf(name, sizeof name, NAME "-%.32s", p->id);
  if (snprintf(file, sizeof file, "%s/%s", dir, name) >= (int)sizeof file) {
    note("%s: path too long", dir);
    return;
  }
  if (!runtime_ready(file, p)) {
    // One unpack at a time per directory: the others wait, then find it ready, and none replaces a
    // runtime that a process has just started. Where locks do not work (some network file systems)
    // each unpacks and renames on its own, which is still safe for a reader.
    char lock[PATH_MAX];
    snprintf(lock, sizeof lock, "%s/.lock", dir);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {}
    int ready = runtime_ready(file, p) || install(p, dir, file, name) == 0;
    if (fd >= 0) close(fd);
    if (!ready) return;
  }
  execve(file, argv, environ);
  // noexec mounts end here (EACCES): try the next place.
  note("cannot run %s: %s", file, strerror(errno));
}

// The last resort: the runtime unpacked into memory at every launch (about a second).
static int run_from_memory(const struct payload *p, char **argv) {
  int fd = memfd_create(NAME, MFD_CLOEXEC);
  if (fd < 0) return fail("cannot unpack its runtime: %s; memory: %s", reasons, strerror(errno));
  const char *why = NULL;
  if (unpack(p, fd, &why) != 0) return fail("cannot unpack its runtime into memory: %s", why);
  // The provider warns on every command (src/provider.ts, RUNTIME_IN_MEMORY_ENV).
  setenv("GPURENTAL_RUNTIME_IN_MEMORY", "1", 1);
  fexecve(fd, argv, environ);
  return fail("cannot run its runtime from memory: %s", strerror(errno));
}

static int join(char *out, size_t size, const char *base, const char *rest) {
  return base && base[0] == '/' && snprintf(out, size, "%s%s", base, rest) < (int)size;
}

int main(int argc, char **argv) {
  struct payload p;
  if (read_payload(&p, argc > 0 ? argv[0] : NULL) != 0) return 1;
  char dir[PATH_MAX];
  const char *chosen = getenv("GPURENTAL_RUNTIME_DIR");
  if (chosen && chosen[0] != '\0') {
    // The user's choice: used or refused, never silently replaced.
    if (!join(dir, sizeof dir, chosen, "")) return fail("GPURENTAL_RUNTIME_DIR must be an absolute path, not \"%s\"", chosen);
    run_from(&p, dir, argv);
    return fail("GPURENTAL_RUNTIME_DIR: %s", reasons);
  }
  if (join(dir, sizeof dir, getenv("XDG_CACHE_HOME"), "/gpurental/runtime")) run_from(&p, dir, argv);
  else if (join(dir, sizeof dir, getenv("HOME"), "/.cache/gpurental/runtime")) run_from(&p, dir, argv);
  const char *tmp = getenv("TMPDIR");
  char rest[64];
  snprintf(rest, sizeof rest, "/gpurental-runtime-%ld", (long)geteuid());
  if (join(dir, sizeof dir, tmp && tmp[0] == '/' ? tmp : "/tmp", rest)) run_from(&p, dir, argv);
  fprintf(stderr, NAME ": no private directory to unpack the runtime into (%s); running it from memory. Set GPURENTAL_RUNTIME_DIR to a directory of yours.\n", reasons);
  return run_from_memory(&p, argv);
}
