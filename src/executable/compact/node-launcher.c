// The npm provider's launcher (linux): `gpurental provider install` puts it beside the executable
// Terraform runs (terraform-provider-gpurental_v<version>, a shell script that hands the launch to
// the launcher of its machine) and provider-node.js, the provider that Node.js runs. In automation
// it makes the launch a session of its command's provider process (command-session.c), so that a
// plan starts Node.js once instead of once per launch; otherwise, or when that does not work out,
// it runs provider-node.js in its own place (execve: the same process id, arguments, environment
// and descriptors). README.md beside this file, "The npm provider's launcher".
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "command-session.h"
#include "print.h"
#include "private-dir.h"

#define SCRIPT "provider-node.js"

extern char **environ;

// Says why the provider cannot start (print_failure): `what`, and why.
static int fail(const char *program, const char *what, const char *why) {
  char message[PATH_MAX + 256];
  snprintf(message, sizeof message, "%s: %s", what, why);
  return print_failure(program, message);
}

// The real directory this file is in: from /proc/self/exe, or where there is no /proc, from the
// path it was started by (a path, never a bare name, which would be looked up in the working
// directory rather than where PATH found it).
static int own_dir(const char *argv0, char *out) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) path[n] = '\0';
  else if (!argv0 || !strchr(argv0, '/') || !realpath(argv0, path)) return 0;
  char *slash = strrchr(path, '/');
  if (!slash) return 0;
  slash[slash == path ? 1 : 0] = '\0';
  memcpy(out, path, strlen(path) + 1);
  return 1;
}

int main(int argc, char **argv) {
  const char *program = "terraform-provider-gpurental";
  if (argc > 0 && argv[0] && argv[0][0] != '\0') {
    const char *base = strrchr(argv[0], '/');
    program = base && base[1] != '\0' ? base + 1 : argv[0];
  }
  char dir[PATH_MAX], script[PATH_MAX];
  if (!own_dir(argc > 0 ? argv[0] : NULL, dir)) return fail(program, "cannot find its own directory", strerror(errno));
  if (snprintf(script, sizeof script, "%s/" SCRIPT, dir) >= (int)sizeof script)
    return fail(program, dir, "path too long");
  // The command's socket is named by the installed provider: its directory (FNV-1a, 64 bits). A
  // launch of another copy (another version, another source) starts a process of its own.
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char *c = dir; *c; c++) hash = (hash ^ (unsigned char)*c) * 0x100000001b3ULL;
  char id[17];
  snprintf(id, sizeof id, "%016llx", (unsigned long long)hash);
  serve_from_command_process(script, id, argc, quiet_private_dir);
  execve(script, argv, environ);
  return fail(program, script, strerror(errno));
}
