/* A plain wasm32-wasi C program (wasi-libc): stdio, malloc, fopen, time. Built by libc_test.ts. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
int main(void) {
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, stdin);
  buf[n] = 0;
  char *p = malloc(100);
  if (!p) return 3;
  if (strstr(buf, "rm -rf")) { fprintf(stderr, "rm -rf is not allowed"); return 2; }
  FILE *f = fopen("/etc/passwd", "r");
  printf("{\"len\":%zu,\"fopen\":%s,\"t\":%d}\n", n, f ? "true" : "false", (int)(time(NULL) > 0));
  return 0;
}
