// What the launchers print (launcher.c, node-launcher.c). Their messages name paths and values of
// the environment, which may hold anything, and Terraform shows a launch's first line of stdout
// to the user. Nothing they print can drive a terminal: C0 and C1 controls, DEL, the line and
// paragraph separators, bidirectional overrides and bytes that are not UTF-8 are written escaped
// (`\x1b`, `\u202e`), as src/display.ts's terminalText writes them.
#include "print.h"

#include <stddef.h>
#include <stdlib.h>

// The length of the UTF-8 sequence at s (1 to 4), or 0 where it is not one.
static size_t utf8_length(const unsigned char *s) {
  if (s[0] < 0x80) return 1;
  size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  // Overlong forms, surrogates and code points past U+10FFFF are no UTF-8 either.
  if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90) ||
      (s[0] == 0xf4 && s[1] > 0x8f))
    return 0;
  return n;
}

static void put_shown(FILE *to, const char *text) {
  const unsigned char *s = (const unsigned char *)text;
  while (*s) {
    size_t n = utf8_length(s);
    unsigned long code = n == 2 ? ((s[0] & 0x1fUL) << 6) | (s[1] & 0x3f)
                         : n == 3 ? ((s[0] & 0x0fUL) << 12) | ((s[1] & 0x3fUL) << 6) | (s[2] & 0x3f)
                                  : s[0];
    if (n == 0 || (n == 1 && (code < 0x20 || code == 0x7f)) || (n == 2 && code <= 0x9f)) {
      fprintf(to, "\\x%02x", n == 2 ? (unsigned)code : s[0]);
      s += n == 2 ? 2 : 1;
    } else if (n == 3 && (code == 0x2028 || code == 0x2029 || (code >= 0x202a && code <= 0x202e) ||
                          (code >= 0x2066 && code <= 0x2069))) {
      fprintf(to, "\\u%04lx", code);
      s += 3;
    } else {
      fwrite(s, 1, n, to);
      s += n;
    }
  }
}

void print_line(FILE *to, const char *program, const char *message) {
  put_shown(to, program);
  fputs(": ", to);
  put_shown(to, message);
  fputc('\n', to);
  fflush(to);
}

int print_failure(const char *program, const char *message) {
  print_line(stderr, program, message);
  if (getenv("TF_PLUGIN_MAGIC_COOKIE")) print_line(stdout, program, message);
  return 1;
}
