// The compact form of the standalone provider executable (linux): this small launcher, followed
// by the provider executable (the Node.js SEA) compressed with xz, followed by a trailer.
//
// Terraform hashes every byte of an installed provider on every command, so the file it installs
// is kept small: the launcher unpacks the runtime once per user into a private cache directory,
// named by the runtime's SHA-256, and from then on only checks it and executes it in its own
// place (the process id, arguments, environment and open descriptors stay Terraform's). The
// runtime's SHA-256 is verified when it is unpacked, and again whenever its file is no longer the
// one a stamp beside it describes (device, inode, size, modification and change times): a
// runtime that does not match is unpacked again, never run. Design and choices: README.md beside
// this file, and docs/design/runtime-integrity.md.
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

#include "command-session.h"
#include "print.h"
#include "private-dir.h"

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

// What its messages call it and what they tell the user to do about a damaged file: the same file
// is the provider (terraform-provider-gpurental_v<version>, as Terraform starts it) and the
// `gpurental` command (its own archive names it so), and it is named as it was started, argv[0]'s
// base name (name_program). NAME is only the names of the files it unpacks.
static char program[128] = NAME;
static char damaged[192] = "the file is damaged; install the provider again";

static void name_program(const char *argv0) {
  if (!argv0) return;
  const char *base = strrchr(argv0, '/');
  base = base ? base + 1 : argv0;
  if (base[0] == '\0') return;
  snprintf(program, sizeof program, "%s", base);
  if (strncmp(base, "terraform-provider-", strlen("terraform-provider-")) != 0)
    snprintf(damaged, sizeof damaged, "the file is damaged; install the gpurental command again");
}

// Says something (print.c): with `failing`, why it cannot start (print_failure); else a note on
// stderr, Terraform's debug log, before it goes on.
static int vsay(int failing, const char *fmt, va_list ap) {
  char message[sizeof reasons + 512];
  vsnprintf(message, sizeof message, fmt, ap);
  if (failing) return print_failure(program, message);
  print_line(stderr, program, message);
  return 0;
}

static int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int code = vsay(1, fmt, ap);
  va_end(ap);
  return code;
}

static void warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsay(0, fmt, ap);
  va_end(ap);
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

// SHA-256 (FIPS 180-4), to check the runtime against the digest its name and the trailer carry.
struct sha256 {
  uint32_t h[8];
  uint64_t bytes;
  unsigned char block[64];
  size_t used;
};

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_init(struct sha256 *c) {
  static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, h0, sizeof h0);
  c->bytes = 0;
  c->used = 0;
}

static void sha256_block(struct sha256 *c, const unsigned char *p) {
  uint32_t w[64], a = c->h[0], b = c->h[1], d3 = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5],
                  g = c->h[6], h = c->h[7];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++)
    w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 7] +
           (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
    uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & d3) ^ (b & d3));
    h = g, g = f, f = e, e = d + t1, d = d3, d3 = b, b = a, a = t1 + t2;
  }
  c->h[0] += a, c->h[1] += b, c->h[2] += d3, c->h[3] += d;
  c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static void sha256_update(struct sha256 *c, const unsigned char *p, size_t n) {
  c->bytes += n;
  if (c->used > 0) {
    size_t take = 64 - c->used < n ? 64 - c->used : n;
    memcpy(c->block + c->used, p, take);
    c->used += take, p += take, n -= take;
    if (c->used < 64) return;
    sha256_block(c, c->block);
    c->used = 0;
  }
  for (; n >= 64; p += 64, n -= 64) sha256_block(c, p);
  memcpy(c->block, p, n);
  c->used = n;
}

// The digest as 64 lowercase hex digits and a NUL.
static void sha256_hex(struct sha256 *c, char out[ID_LENGTH + 1]) {
  uint64_t bits = c->bytes * 8;
  unsigned char pad[72] = {0x80};
  size_t padding = (c->used < 56 ? 56 : 120) - c->used;
  for (int i = 0; i < 8; i++) pad[padding + i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_update(c, pad, padding + 8);
  for (int i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", (c->h[i / 4] >> (24 - 8 * (i % 4))) & 0xff);
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
    return fail("cannot read its own trailer: %s", damaged);
  if (memcmp(t, MAGIC, 16) != 0)
    return fail("its runtime is missing (no trailer): %s", damaged);
  p->offset = le64(t + 16);
  p->length = le64(t + 24);
  p->runtime_size = le64(t + 32);
  memcpy(p->id, t + 40, ID_LENGTH);
  p->id[ID_LENGTH] = '\0';
  for (int i = 0; i < ID_LENGTH; i++)
    if (!strchr("0123456789abcdef", p->id[i]) || p->id[i] == '\0')
      return fail("its trailer names no runtime: %s", damaged);
  uint64_t size = (uint64_t)st.st_size;
  if (p->offset > size || p->length > size - p->offset || p->offset + p->length > size - TRAILER_SIZE)
    return fail("its trailer points outside the file: %s", damaged);
  return 0;
}

// The runtime at file has its size, is a regular file (no link) and this user's alone; whether it
// is the one that was shipped is the stamp's and the SHA-256's to say.
static int runtime_ready(const char *file, const struct payload *p) {
  struct stat st;
  return lstat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
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
  struct sha256 digest;
  sha256_init(&digest);
  // "the file is damaged; ...": the stream in it fails its check.
  *why = damaged;
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
    sha256_update(&digest, buf, n);
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
  if (ret == LZMA_STREAM_END && written == p->runtime_size && pos == p->length && s.avail_in == 0) {
    // The xz check covers the stream; this ties what was written to the digest the name carries.
    char hex[ID_LENGTH + 1];
    sha256_hex(&digest, hex);
    if (memcmp(hex, p->id, ID_LENGTH) == 0) rc = 0;
  }
done:
  lzma_end(&s);
  return rc;
}

// Whether the file at `file` is the runtime that was shipped: its size and its SHA-256. Reads the
// whole file (about 0.3 s per 100 MB): only when its stamp does not match.
static int verify_file(const char *file, const struct payload *p) {
  int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  static uint8_t buf[CHUNK];
  struct sha256 digest;
  sha256_init(&digest);
  uint64_t total = 0;
  ssize_t got;
  while ((got = read(fd, buf, CHUNK)) != 0) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    sha256_update(&digest, buf, (size_t)got);
    total += (uint64_t)got;
  }
  close(fd);
  char hex[ID_LENGTH + 1];
  sha256_hex(&digest, hex);
  return got == 0 && total == p->runtime_size && memcmp(hex, p->id, ID_LENGTH) == 0 ? 0 : -1;
}

// The stamp of a verified runtime: what identifies its file and changes with any write to it or any
// replacement (a write sets the modification and change times, a chmod the change time, a rename
// over it another inode; the change time cannot be set back from user space).
static int stamp_text(const char *file, char *out, size_t size) {
  struct stat st;
  if (lstat(file, &st) != 0) return -1;
  snprintf(out, size, "gpurental-stamp-v1 %llu %llu %llu %lld.%09ld %lld.%09ld\n", (unsigned long long)st.st_dev,
           (unsigned long long)st.st_ino, (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
           (long)st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec, (long)st.st_ctim.tv_nsec);
  return 0;
}

// Whether the stamp beside the runtime describes the file there now: a stat and a small read.
static int stamp_matches(const char *file, const char *stamp) {
  char want[160], have[160];
  if (stamp_text(file, want, sizeof want) != 0) return 0;
  int fd = open(stamp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, have, sizeof have - 1);
  close(fd);
  if (n <= 0) return 0;
  have[n] = '\0';
  return strcmp(want, have) == 0;
}

// Records the stamp of a runtime just verified: written aside, then renamed into place. A stamp
// that cannot be written only costs the next launch another verification.
static void write_stamp(const char *dir, const char *file, const char *stamp) {
  char text[160], tmp[PATH_MAX];
  if (stamp_text(file, text, sizeof text) != 0) return;
  snprintf(tmp, sizeof tmp, "%s/.stamp-%ld", dir, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  size_t length = strlen(text);
  int ok = write(fd, text, length) == (ssize_t)length;
  if (close(fd) != 0 || !ok || rename(tmp, stamp) != 0) unlink(tmp);
}

// Removes runtimes of other versions unpacked long ago and temp files of unpacks that died.
static void prune(const char *dir, const char *keep) {
  DIR *d = opendir(dir);
  if (!d) return;
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d))) {
    // Runtimes and their stamps (`<name>.stamp`) of other versions.
    int runtime = strncmp(e->d_name, NAME "-", sizeof NAME) == 0 && strncmp(e->d_name, keep, strlen(keep)) != 0;
    int temp = strncmp(e->d_name, ".unpack-", 8) == 0 || strncmp(e->d_name, ".stamp-", 7) == 0;
    struct stat st;
    if (!(runtime || temp) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (now - st.st_mtime > (temp ? 24 * 3600 : STALE_SECONDS)) unlinkat(dirfd(d), e->d_name, 0);
  }
  closedir(d);
}

// Unpacks the runtime into dir as file: a temp file written, synced, made read-only, then renamed
// into place, so that a reader never sees a part and two first launches at once both succeed.
static int install(const struct payload *p, const char *dir, const char *file, const char *name,
                   const char *stamp) {
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
  // After the rename, which may set the change time.
  write_stamp(dir, file, stamp);
  prune(dir, name);
  return 0;
}

// Runs the runtime from dir, unpacking it first if needed, and only once it is known to be the
// runtime that was shipped. Returns only when that did not work.
static void run_from(const struct payload *p, const char *dir, int argc, char **argv) {
  if (!private_dir(dir)) return;
  char name[128], file[PATH_MAX], stamp[PATH_MAX];
  snprintf(name, sizeof name, NAME "-%.32s", p->id);
  if (snprintf(file, sizeof file, "%s/%s", dir, name) >= (int)sizeof file ||
      snprintf(stamp, sizeof stamp, "%s/%s.stamp", dir, name) >= (int)sizeof stamp) {
    note("%s: path too long", dir);
    return;
  }
  // The common case: a stat and a small read.
  if (!(runtime_ready(file, p) && stamp_matches(file, stamp))) {
    // One unpack or verification at a time per directory: the others wait, then find it ready,
    // and none replaces a runtime that a process has just started. Where locks do not work (some
    // network file systems) each does its own, which is still safe for a reader.
    char lock[PATH_MAX];
    snprintf(lock, sizeof lock, "%s/.lock", dir);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {}
    int ready = 0;
    if (runtime_ready(file, p)) {
      if (stamp_matches(file, stamp)) {
        ready = 1;  // another launch verified it meanwhile
      } else if (verify_file(file, p) == 0) {
        // Unpacked before stamps existed, copied, or touched without a change: it is the one.
        write_stamp(dir, file, stamp);
        ready = 1;
      } else {
        warn("%s is not the runtime that was shipped (its SHA-256 differs from its name): unpacking it again", file);
        unlink(file);
      }
    }
    if (!ready) ready = install(p, dir, file, name, stamp) == 0;
    if (fd >= 0) close(fd);
    if (!ready) return;
  }
  // In automation, the command's launches share one provider process (command-session.c).
  serve_from_command_process(file, p->id, argc, quiet_private_dir);
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
  // The provider warns on every command (src/provider/provider.ts, RUNTIME_IN_MEMORY_ENV).
  setenv("GPURENTAL_RUNTIME_IN_MEMORY", "1", 1);
  fexecve(fd, argv, environ);
  return fail("cannot run its runtime from memory: %s", strerror(errno));
}

static int join(char *out, size_t size, const char *base, const char *rest) {
  return base && base[0] == '/' && snprintf(out, size, "%s%s", base, rest) < (int)size;
}

int main(int argc, char **argv) {
  struct payload p;
  name_program(argc > 0 ? argv[0] : NULL);
  if (read_payload(&p, argc > 0 ? argv[0] : NULL) != 0) return 1;
  char dir[PATH_MAX];
  const char *chosen = getenv("GPURENTAL_RUNTIME_DIR");
  if (chosen && chosen[0] != '\0') {
    // The user's choice: used or refused, never silently replaced.
    if (!join(dir, sizeof dir, chosen, "")) return fail("GPURENTAL_RUNTIME_DIR must be an absolute path, not \"%s\"", chosen);
    run_from(&p, dir, argc, argv);
    return fail("GPURENTAL_RUNTIME_DIR: %s", reasons);
  }
  if (join(dir, sizeof dir, getenv("XDG_CACHE_HOME"), "/gpurental/runtime")) run_from(&p, dir, argc, argv);
  else if (join(dir, sizeof dir, getenv("HOME"), "/.cache/gpurental/runtime")) run_from(&p, dir, argc, argv);
  const char *tmp = getenv("TMPDIR");
  char rest[64];
  snprintf(rest, sizeof rest, "/gpurental-runtime-%ld", (long)geteuid());
  if (join(dir, sizeof dir, tmp && tmp[0] == '/' ? tmp : "/tmp", rest)) run_from(&p, dir, argc, argv);
  warn("no private directory to unpack the runtime into (%s); running it from memory. Set GPURENTAL_RUNTIME_DIR to a directory of yours.", reasons);
  return run_from_memory(&p, argv);
}
