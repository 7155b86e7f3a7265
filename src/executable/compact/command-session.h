// The launch side of the command's provider process (command-session.c).
#ifndef GPURENTAL_COMMAND_SESSION_H
#define GPURENTAL_COMMAND_SESSION_H

// Serves this launch as a session of its Terraform command's provider process, starting that
// process first when it is the command's first launch, and exits with the session. Returns when
// the launch is not one to serve so (not Terraform's, not in automation, the mode set), or when
// that did not work out: the caller then runs `runtime` itself. `id` is the runtime's SHA-256 in
// hex; `private_dir` creates a directory and says whether only this user can use it.
void serve_from_command_process(const char *runtime, const char *id, int argc, int (*private_dir)(const char *));

#endif
