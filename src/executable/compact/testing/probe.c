// A stand-in runtime for launcher.test.ts: prints what it was started with, then exits 7.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = '\0';
  printf("pid=%ld\nexe=%s\n", (long)getpid(), exe);
  for (int i = 1; i < argc; i++) printf("arg=%s\n", argv[i]);
  const char *probe = getenv("PROBE");
  printf("env=%s\n", probe ? probe : "");
  char line[256];
  if (fgets(line, sizeof line, stdin)) printf("stdin=%s", line);
  return 7;
}
