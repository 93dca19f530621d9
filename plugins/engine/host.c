/*
 * hookbox JS engine: the native functions the JS prelude is built on.
 *
 * They are gathered on one object, `__hookbox_host`, which the prelude
 * captures and removes from the global scope. Only stdin, stdout, stderr,
 * the granted environment, randomness and a monotonic clock are reachable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wasi/api.h>
#include "engine.h"

void hb_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

char *hb_read_all_stdin(size_t *len)
{
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            return NULL;
        if (used + 1 >= cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) { free(buf); return NULL; }
            buf = grown;
        }
        ssize_t n = read(0, buf + used, cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    buf[used] = '\0'; /* QuickJS wants NUL-terminated source text */
    *len = used;
    return buf;
}

/* Bytes of a string (as UTF-8), an ArrayBuffer or a typed array view. */
static const uint8_t *hb_bytes(JSContext *ctx, JSValueConst v, size_t *len,
                               const char **owned)
{
    *owned = NULL;
    if (JS_IsString(v)) {
        *owned = JS_ToCStringLen(ctx, len, v);
        return (const uint8_t *)*owned;
    }
    size_t offset, elem, size;
    JSValue ab = JS_GetTypedArrayBuffer(ctx, v, &offset, len, &elem);
    if (JS_IsException(ab)) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        uint8_t *p = JS_GetArrayBuffer(ctx, len, v);
        if (!p)
            JS_ThrowTypeError(ctx, "expected a string, ArrayBuffer or typed array");
        return p;
    }
    uint8_t *base = JS_GetArrayBuffer(ctx, &size, ab);
    JS_FreeValue(ctx, ab);
    return base ? base + offset : NULL;
}

static JSValue hb_write(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int fd;
    size_t len;
    const char *owned;
    if (argc < 2 || JS_ToInt32(ctx, &fd, argv[0]))
        return JS_EXCEPTION;
    const uint8_t *p = hb_bytes(ctx, argv[1], &len, &owned);
    if (!p)
        return JS_EXCEPTION;
    if (fd == 1 || fd == 2)
        hb_write_all(fd, (const char *)p, len);
    if (owned)
        JS_FreeCString(ctx, owned);
    return JS_UNDEFINED;
}

static JSValue hb_read_stdin(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t len = 0;
    char *buf = hb_read_all_stdin(&len);
    if (!buf)
        return JS_ThrowOutOfMemory(ctx);
    JSValue out = JS_NewArrayBufferCopy(ctx, (uint8_t *)buf, len);
    free(buf);
    return out;
}

static JSValue hb_read_stdin_text(JSContext *ctx, JSValueConst this_val, int argc,
                                  JSValueConst *argv)
{
    size_t len = 0;
    char *buf = hb_read_all_stdin(&len);
    if (!buf)
        return JS_ThrowOutOfMemory(ctx);
    JSValue out = JS_NewStringLen(ctx, buf, len);
    free(buf);
    return out;
}

static JSValue hb_exit(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    int code = 0;
    if (argc > 0)
        JS_ToInt32(ctx, &code, argv[0]);
    _Exit(code & 0xff);
}

static JSValue hb_env(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    __wasi_size_t count = 0, size = 0;
    JSValue obj = JS_NewObject(ctx);
    if (__wasi_environ_sizes_get(&count, &size) != 0 || count == 0)
        return obj;
    uint8_t **ptrs = calloc(count, sizeof(uint8_t *));
    uint8_t *data = malloc(size);
    if (ptrs && data && __wasi_environ_get(ptrs, data) == 0) {
        for (__wasi_size_t i = 0; i < count; i++) {
            const char *entry = (const char *)ptrs[i];
            const char *eq = strchr(entry, '=');
            if (!eq)
                continue;
            JSValue key = JS_NewStringLen(ctx, entry, (size_t)(eq - entry));
            JSAtom atom = JS_ValueToAtom(ctx, key);
            JS_SetProperty(ctx, obj, atom, JS_NewString(ctx, eq + 1));
            JS_FreeAtom(ctx, atom);
            JS_FreeValue(ctx, key);
        }
    }
    free(ptrs);
    free(data);
    return obj;
}

static JSValue hb_random(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    uint64_t bits = 0;
    __wasi_random_get((uint8_t *)&bits, sizeof bits);
    return JS_NewFloat64(ctx, (double)(bits >> 11) / 9007199254740992.0);
}

static JSValue hb_hrtime(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return JS_NewFloat64(ctx, (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
}

static JSValue hb_utf8_encode(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t len;
    const char *s = JS_ToCStringLen(ctx, &len, argc > 0 ? argv[0] : JS_UNDEFINED);
    if (!s)
        return JS_EXCEPTION;
    JSValue out = JS_NewArrayBufferCopy(ctx, (const uint8_t *)s, len);
    JS_FreeCString(ctx, s);
    return out;
}

static JSValue hb_utf8_decode(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t len;
    const char *owned;
    const uint8_t *p = hb_bytes(ctx, argc > 0 ? argv[0] : JS_UNDEFINED, &len, &owned);
    if (!p)
        return JS_EXCEPTION;
    JSValue out = JS_NewStringLen(ctx, (const char *)p, len);
    if (owned)
        JS_FreeCString(ctx, owned);
    return out;
}

static const JSCFunctionListEntry hb_host_funcs[] = {
    JS_CFUNC_DEF("write", 2, hb_write),
    JS_CFUNC_DEF("readStdin", 0, hb_read_stdin),
    JS_CFUNC_DEF("readStdinText", 0, hb_read_stdin_text),
    JS_CFUNC_DEF("exit", 1, hb_exit),
    JS_CFUNC_DEF("env", 0, hb_env),
    JS_CFUNC_DEF("random", 0, hb_random),
    JS_CFUNC_DEF("hrtime", 0, hb_hrtime),
    JS_CFUNC_DEF("utf8Encode", 1, hb_utf8_encode),
    JS_CFUNC_DEF("utf8Decode", 1, hb_utf8_decode),
};

void hb_host_install(JSContext *ctx)
{
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue host = JS_NewObject(ctx);
    JS_SetPropertyFunctionList(ctx, host, hb_host_funcs,
                               sizeof hb_host_funcs / sizeof hb_host_funcs[0]);
    JS_SetPropertyStr(ctx, global, "__hookbox_host", host);
    JS_FreeValue(ctx, global);
}
