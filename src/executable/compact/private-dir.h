// Private directories (private-dir.c): where the launchers keep what they run and the command's
// sockets, trusted only when no other user could change what is in them.
#ifndef GPURENTAL_PRIVATE_DIR_H
#define GPURENTAL_PRIVATE_DIR_H

#define REASONS_SIZE 4096

// Why each directory tried was not used, for a message when none is: "; "-separated.
extern char reasons[REASONS_SIZE];

// Adds a reason to `reasons`.
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Creates dir and its missing parents (mode 0700), but only under a trusted chain: nothing is made
// in another user's directory (a HOME kept across sudo). True when dir is then a real directory
// (no symbolic link), this user's, private (mode 0700 or stricter), under a chain of directories
// that only this user or root can change. What is wrong is noted in `reasons`.
int private_dir(const char *dir);

// private_dir, leaving `reasons` as it was: for the command's socket directory, which is no reason
// why a runtime directory was not used.
int quiet_private_dir(const char *dir);

#endif
