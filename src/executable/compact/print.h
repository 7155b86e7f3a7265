// What the launchers print (print.c).
#ifndef GPURENTAL_PRINT_H
#define GPURENTAL_PRINT_H

#include <stdio.h>

// Writes "<program>: <message>\n" to `to`, with whatever could drive a terminal written escaped.
void print_line(FILE *to, const char *program, const char *message);

#endif
