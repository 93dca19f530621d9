/*
 * hookbox JS engine: shared declarations of the C glue around QuickJS.
 */
#ifndef HOOKBOX_ENGINE_H
#define HOOKBOX_ENGINE_H

#include "quickjs.h"

/* Exit code used when the host asked the engine to stop (deadline or fuel). */
#define HB_EXIT_INTERRUPTED 124

/* Installs the native `__hookbox_host` object the prelude builds on. */
void hb_host_install(JSContext *ctx);

/* Writes all of `len` bytes to file descriptor `fd`; short writes are retried. */
void hb_write_all(int fd, const char *buf, size_t len);

/* Reads stdin to its end (NUL-terminated). The caller frees it; `*len` gets its size. */
char *hb_read_all_stdin(size_t *len);

/* Prints an uncaught exception the way the prelude formats it, on stderr. */
void hb_report(JSContext *ctx, JSValueConst error);

/* True once the host's should_interrupt() answered 1 during this run. */
int hb_was_interrupted(void);

/* Starts asking the host whether to stop, from inside the JS interpreter. */
void hb_interrupt_install(JSRuntime *rt);

/* A runtime whose allocations come from the call's arena while one is open (arena.c). */
JSRuntime *hb_new_runtime(void);
/* Reserves the arena (at snapshot time). */
void hb_arena_create(void);
/* Atoms existing now become constant (src/compile/_js_patches.ts, SNAPSHOT_ATOMS). */
void hb_freeze_atoms(JSRuntime *rt);
/* Opens the arena for a call, from its start. */
void hb_arena_begin(void);

#endif
