// Private directories: the compact executable's runtime directory and the command's socket
// directory (launcher.c, node-launcher.c, command-session.c). Whoever can write in a directory
// could replace what runs as the provider there, or answer its launches; a symbolic link another
// user made in /tmp could choose where files land. README.md beside this file, step 3.
#define _GNU_SOURCE
#include "private-dir.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char reasons[REASONS_SIZE];

void note(const char *fmt, ...) {
  size_t used = strlen(reasons);
  if (used + 2 >= sizeof reasons) return;
  if (used > 0) reasons[used++] = ';', reasons[used++] = ' ', reasons[used] = '\0';
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reasons + used, sizeof reasons - used, fmt, ap);
  va_end(ap);
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

// Every symbolic link on the way to path (which exists) belongs to this user or root, and with
// `real`, path itself is no link at all, whoever owns the link or its target. A link that another
// user made in a directory anyone can write to ($TMPDIR/gpurental-runtime-<uid> made before the
// user's first launch) would otherwise choose where the runtime is unpacked; the checks on the
// real path alone cannot see it, since its target may well be the user's own directory.
static int links_ok(const char *given, int real) {
  uid_t me = geteuid();
  char path[PATH_MAX];
  int length = snprintf(path, sizeof path, "%s", given);
  if (length >= (int)sizeof path) {
    note("%s: path too long", given);
    return 0;
  }
  // "dir/" names dir itself: its last part is the one that must be no link.
  while (length > 1 && path[length - 1] == '/') path[--length] = '\0';
  for (int hops = 0; hops < 40; hops++) {
    int followed = 0;
    for (size_t end = 1; !followed; end++) {
      if (path[end] != '/' && path[end] != '\0') continue;
      char c = path[end];
      path[end] = '\0';
      struct stat st;
      if (lstat(path, &st) != 0) {
        note("%s: %s", path, strerror(errno));
        return 0;
      }
      if (S_ISLNK(st.st_mode)) {
        if (c == '\0' && real) {
          note("%s is a symbolic link: the runtime's directory must be a real directory", given);
          return 0;
        }
        if (st.st_uid != me && st.st_uid != 0) {
          note("%s is a symbolic link of another user's", path);
          return 0;
        }
        char target[PATH_MAX], next[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n < 0) {
          note("%s: %s", path, strerror(errno));
          return 0;
        }
        target[n] = '\0';
        // A relative target is taken from the link's own directory.
        char *slash = strrchr(path, '/');
        int at = target[0] == '/' ? 0 : (int)(slash - path);
        int length = snprintf(next, sizeof next, "%.*s%s%s%s%s", at, path, target[0] == '/' ? "" : "/", target,
                              c ? "/" : "", c ? path + end + 1 : "");
        if (length >= (int)sizeof next) {
          note("%s: path too long", given);
          return 0;
        }
        memcpy(path, next, (size_t)length + 1);
        followed = 1;
        continue;
      }
      path[end] = c;
      if (c == '\0') return 1;
    }
  }
  note("%s: too many symbolic links", given);
  return 0;
}

// A directory the runtime may be run from (or a socket made in): a real directory (no symbolic link), this user's, private
// (mode 0700 or stricter), under a trusted chain. Anyone who could write there could replace what
// runs as the provider.
static int trusted_dir(const char *dir) {
  char real[PATH_MAX];
  struct stat st;
  if (!links_ok(dir, 1)) return 0;
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

int private_dir(const char *dir) {
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
  if (!links_ok(path, 0) || !realpath(path, real) || !trusted_chain(real)) return 0;
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

int quiet_private_dir(const char *dir) {
  static char saved[REASONS_SIZE];
  memcpy(saved, reasons, sizeof reasons);
  int ok = private_dir(dir);
  memcpy(reasons, saved, sizeof reasons);
  return ok;
}
