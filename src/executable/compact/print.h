// What the launchers print (print.c).
#ifndef GPURENTAL_PRINT_H
#define GPURENTAL_PRINT_H

#include <stdio.h>

// Writes "<program>: <message>\n" to `to`, with whatever could drive a terminal written escaped.
void print_line(FILE *to, const char *program, const char *message);

// Says why the provider cannot start: on stderr, and when Terraform started it also as the first
// line of stdout, which Terraform prints ("Unrecognized remote plugin message: ...") while it
// shows a provider's stderr only in its debug log. Returns 1, the exit code.
int print_failure(const char *program, const char *message);

#endif
