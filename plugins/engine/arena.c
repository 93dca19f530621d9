/*
 * hookbox JS engine: QuickJS's allocator during a call.
 *
 * A call's allocations are carved one after another from an arena made at
 * snapshot time, and freeing them does nothing: the call's memory is thrown
 * away after it (a fresh instance) or written back from the snapshot (a warm
 * one), arena pointer included. So what a call allocates lies in one
 * compact range instead of in free chunks scattered over the snapshot's
 * heap, and a warm instance has fewer 256-byte blocks to restore. Past the
 * arena's end (a call that allocates a lot), allocations go to malloc as
 * before. Before the first call (the prelude and the hook's bytecode, made
 * under Wizer) everything is malloc'd. QuickJS's own accounting (the GC
 * threshold) counts arena chunks as it counts malloc'd ones.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"

#define HB_ARENA_SIZE (48 * 1024)
/* Each chunk starts with a 16-byte header holding its usable size; chunks
   and payloads are 16-byte aligned, like malloc's. */
#define HB_HEADER 16
#define HB_OVERHEAD 8

static uint8_t *arena_base;
/* Everything below this address was allocated before the snapshot was taken
   (0 until then): immortal during calls (src/compile/_js_patches.ts, IMMORTAL).
   No call's allocation may land below it, and no call frees anything below it. */
uintptr_t hb_immortal_below = 0;
static uint8_t *arena_end;
static uint8_t *arena_next;
static int arena_on;

static int in_arena(const void *p)
{
    return (const uint8_t *)p >= arena_base && (const uint8_t *)p < arena_end;
}

static size_t hb_usable(const void *ptr)
{
    if (in_arena(ptr))
        return *(const size_t *)((const uint8_t *)ptr - HB_HEADER);
    return malloc_usable_size((void *)ptr);
}

static void *hb_carve(size_t size)
{
    size_t usable = (size + 15) & ~(size_t)15;
    if (!arena_on || usable < size || (size_t)(arena_end - arena_next) < usable + HB_HEADER)
        return NULL;
    uint8_t *chunk = arena_next;
    arena_next += usable + HB_HEADER;
    *(size_t *)chunk = usable;
    return chunk + HB_HEADER;
}

static int below(const void *p)
{
    return (uintptr_t)p < hb_immortal_below;
}

/* malloc, but never a free chunk of the snapshot's heap: such a chunk is kept
   (it is the snapshot's memory, restored after the call) and malloc asked again
   — the snapshot's free chunks are finitely many. */
static void *hb_malloc_above(size_t size)
{
    void *ptr = malloc(size);
    while (ptr && below(ptr))
        ptr = malloc(size);
    return ptr;
}

static void *hb_malloc(JSMallocState *s, size_t size)
{
    if (s->malloc_size + size > s->malloc_limit)
        return NULL;
    void *ptr = hb_carve(size);
    if (!ptr) {
        ptr = hb_malloc_above(size);
        if (!ptr)
            return NULL;
    }
    s->malloc_count++;
    s->malloc_size += hb_usable(ptr) + HB_OVERHEAD;
    return ptr;
}

static void hb_free(JSMallocState *s, void *ptr)
{
    if (!ptr)
        return;
    s->malloc_count--;
    s->malloc_size -= hb_usable(ptr) + HB_OVERHEAD;
    if (!in_arena(ptr) && !below(ptr))
        free(ptr);
}

static void *hb_realloc(JSMallocState *s, void *ptr, size_t size)
{
    if (!ptr)
        return size == 0 ? NULL : hb_malloc(s, size);
    if (size == 0) {
        hb_free(s, ptr);
        return NULL;
    }
    size_t old = hb_usable(ptr);
    /* QuickJS's own test (the limit may be SIZE_MAX: nothing is added to it). */
    if (s->malloc_size + size - old > s->malloc_limit)
        return NULL;
    if (!in_arena(ptr) && !below(ptr)) {
        void *moved = realloc(ptr, size);
        if (!moved)
            return NULL;
        if (below(moved)) {
            /* Moved into a free chunk of the snapshot's heap: kept there, the
               bytes copied above it. */
            void *above = hb_malloc_above(size);
            if (!above)
                return NULL;
            memcpy(above, moved, size);
            moved = above;
        }
        s->malloc_size += malloc_usable_size(moved);
        s->malloc_size -= old;
        return moved;
    }
    if (below(ptr)) {
        /* The snapshot's own memory is never freed or moved during a call: the
           bytes are copied to a new chunk. */
        if (size <= old)
            return ptr;
        void *moved = hb_malloc(s, size);
        if (!moved)
            return NULL;
        memcpy(moved, ptr, old);
        s->malloc_count--;
        s->malloc_size -= old + HB_OVERHEAD;
        return moved;
    }
    if (size <= old)
        return ptr;
    /* The arena's last chunk grows in place. */
    uint8_t *chunk = (uint8_t *)ptr - HB_HEADER;
    size_t usable = (size + 15) & ~(size_t)15;
    if (chunk + HB_HEADER + old == arena_next && usable >= size &&
        (size_t)(arena_end - chunk) >= usable + HB_HEADER) {
        arena_next = chunk + HB_HEADER + usable;
        *(size_t *)chunk = usable;
        s->malloc_size += usable - old;
        return ptr;
    }
    void *moved = hb_malloc(s, size);
    if (!moved)
        return NULL;
    memcpy(moved, ptr, old);
    hb_free(s, ptr);
    return moved;
}

static const JSMallocFunctions hb_malloc_functions = {
    hb_malloc,
    hb_free,
    hb_realloc,
    hb_usable,
};

JSRuntime *hb_new_runtime(void)
{
    return JS_NewRuntime2(&hb_malloc_functions, NULL);
}

void hb_arena_create(void)
{
    arena_base = malloc(HB_ARENA_SIZE);
    if (arena_base)
        arena_end = arena_base + HB_ARENA_SIZE;
    arena_next = arena_base;
    arena_on = 0;
    /* The snapshot's heap ends here: what lies below is immortal from now on. */
    hb_immortal_below = (uintptr_t)arena_base;
}

void hb_arena_begin(void)
{
    arena_next = arena_base;
    arena_on = arena_base != NULL;
}
