// Runs a command as a child subreaper (Linux), for bench/commands.js: every process the command
// starts and leaves behind (the provider process a command shares among its launches, which its
// first launch starts and outlives) is reparented here and waited for, so this process's waited-for
// children's CPU time, which the benchmark reads, counts it. Writes one byte on descriptor 3 when
// the command itself exits: its wall time ends there, not when the last process it left exits.
// Processes still running 3 s after the command (a resident provider process, which stays up for
// the next command) are left to run: the benchmark reads their CPU time from /proc instead.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

static volatile sig_atomic_t alarmed = 0;

static void on_alarm_signal(int sig) {
  (void)sig;
  alarmed = 1;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return perror("prctl"), 2;
  // The alarm ends the wait for what the command left; the exit code is the command's.
  struct sigaction on_alarm = {.sa_handler = on_alarm_signal};
  sigaction(SIGALRM, &on_alarm, NULL);
  pid_t child = fork();
  if (child < 0) return perror("fork"), 2;
  if (child == 0) {
    close(3);
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    _exit(127);
  }
  int code = 2, status;
  for (;;) {
    pid_t pid = wait(&status);
    if (pid < 0) {
      if (errno == EINTR && !alarmed) continue;
      break;
    }
    if (pid == child) {
      alarm(3);
      code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      (void)!write(3, "x", 1);
      close(3);
    }
  }
  return code;
}
