/*
 * hookbox: single-threaded stand-in for <pthread.h>.
 *
 * QuickJS includes <pthread.h> for Atomics.wait/notify. The engine runs on
 * wasm32-wasi without threads and disables blocking (JS_SetCanBlock(rt, 0)),
 * so these locks never contend and the condition variables never wait.
 */
#ifndef HOOKBOX_PTHREAD_STUB_H
#define HOOKBOX_PTHREAD_STUB_H

#include <time.h>

typedef struct { int unused; } pthread_mutex_t;
typedef struct { int unused; } pthread_cond_t;
typedef struct { int unused; } pthread_condattr_t;

#define PTHREAD_MUTEX_INITIALIZER { 0 }

static inline int pthread_mutex_lock(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_mutex_unlock(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a) {
    (void)c; (void)a; return 0;
}
static inline int pthread_cond_destroy(pthread_cond_t *c) { (void)c; return 0; }
static inline int pthread_cond_signal(pthread_cond_t *c) { (void)c; return 0; }
static inline int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    (void)c; (void)m; return 0;
}
static inline int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                         const struct timespec *t) {
    (void)c; (void)m; (void)t; return 0;
}

#endif
