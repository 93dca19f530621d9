/*
 * hookbox JS engine: entry points of the QuickJS-based WASI command module.
 *
 * `wizer.initialize` runs once at compile time under Wizer: it creates the
 * runtime and context, evaluates the prelude (Node-style globals), reads the
 * hook's bundle from stdin and compiles it to bytecode. Wizer snapshots the
 * resulting linear memory, so `_start` only has to run that bytecode against
 * the event on stdin, drive the event loop and exit with the hook's code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"

/* Defined by the build: the prelude source (prelude.h, generated). */
extern const char hb_prelude_source[];
extern const unsigned int hb_prelude_length;

void __wasm_call_ctors(void);

/* Bytes a run may allocate before QuickJS's first cycle collection. */
#define HB_GC_HEADROOM (4 * 1024 * 1024)

static JSRuntime *rt;
static JSContext *ctx;
static JSValue bundle;  /* compiled hook bytecode, ready to run */
static JSValue hook_fn; /* function-style hooks: the default export, called per event */
static int function_style;
static JSValue loop;    /* the prelude's event-loop controller */
static int ready;

static void hb_fail_init(const char *what)
{
    fprintf(stderr, "hookbox engine: %s\n", what);
    if (ctx)
        hb_report(ctx, JS_GetException(ctx));
    exit(70);
}

/* The prelude's loop controller methods, looked up once at snapshot time. */
enum {
    HB_START, HB_CALL, HB_TRACK, HB_TICK, HB_TICKS, HB_FINISH, HB_FATAL, HB_REJECTION,
    HB_LOOP_COUNT
};
static const char *const hb_loop_names[HB_LOOP_COUNT] = {
    "start", "call", "track", "tick", "ticks", "finish", "fatal", "rejection",
};
static JSValue hb_loop_fns[HB_LOOP_COUNT];

/* Calls `loop[which](...argv)`; the result is owned by the caller. */
static JSValue hb_loop_call(int which, int argc, JSValueConst *argv)
{
    return JS_Call(ctx, hb_loop_fns[which], loop, argc, argv);
}

static void hb_rejection(JSContext *c, JSValueConst promise, JSValueConst reason,
                         JS_BOOL handled, void *opaque)
{
    JSValueConst argv[3] = { promise, reason, JS_NewBool(c, handled) };
    JS_FreeValue(c, hb_loop_call(HB_REJECTION, 3, argv));
}

void hb_report(JSContext *c, JSValueConst error)
{
    const char *s = JS_ToCString(c, error);
    fprintf(stderr, "Uncaught %s\n", s ? s : "exception");
    if (s)
        JS_FreeCString(c, s);
}

/* Reads the global `name` and deletes it, so hook code cannot reach it; the caller owns it. */
static JSValue hb_take_global(const char *name)
{
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue value = JS_GetPropertyStr(ctx, global, name);
    JSAtom atom = JS_NewAtom(ctx, name);
    JS_DeleteProperty(ctx, global, atom, 0);
    JS_FreeAtom(ctx, atom);
    JS_FreeValue(ctx, global);
    return value;
}

static void hb_load_prelude(void)
{
    hb_host_install(ctx);
    JSValue r = JS_Eval(ctx, hb_prelude_source, hb_prelude_length, "hookbox:prelude",
                        JS_EVAL_TYPE_GLOBAL);
    if (JS_IsException(r))
        hb_fail_init("prelude failed");
    JS_FreeValue(ctx, r);
    loop = hb_take_global("__hookbox_loop");
    for (int i = 0; i < HB_LOOP_COUNT; i++)
        hb_loop_fns[i] = JS_GetPropertyStr(ctx, loop, hb_loop_names[i]);
}

/*
 * Runs process.nextTick callbacks, then every pending promise job, and again
 * while either queued more — Node's order. -1 when one threw.
 */
static int hb_run_jobs(void)
{
    JSContext *job_ctx;
    for (;;) {
        JSValue ran = hb_loop_call(HB_TICKS, 0, NULL);
        if (JS_IsException(ran))
            return -1;
        int more = JS_ToBool(ctx, ran);
        JS_FreeValue(ctx, ran);
        int r;
        while ((r = JS_ExecutePendingJob(rt, &job_ctx)) > 0)
            more = 1;
        if (r < 0)
            return -1;
        if (!more)
            return 0;
    }
}

/*
 * Function-style hooks: the module runs once, here, under Wizer (its top
 * level sees no event and no host), and its default export is kept in the
 * snapshot; `_start` then only calls it.
 */
static void hb_evaluate_function_hook(void)
{
    JSValue done = JS_EvalFunction(ctx, bundle);
    bundle = JS_UNDEFINED;
    if (JS_IsException(done))
        hb_fail_init("the module failed while it was loaded");
    JS_FreeValue(ctx, done);
    if (hb_run_jobs() < 0)
        hb_fail_init("the module failed while it was loaded");
    hook_fn = hb_take_global("__hookbox_function");
    if (!JS_IsFunction(ctx, hook_fn)) {
        fputs("hookbox engine: the default export is not a function\n", stderr);
        exit(70);
    }
}

/* Wizer's init function: prelude + hook bytecode into the snapshot. */
__attribute__((export_name("wizer.initialize")))
void hb_initialize(void)
{
    __wasm_call_ctors();
    rt = hb_new_runtime();
    JS_SetCanBlock(rt, 0);
    JS_SetMaxStackSize(rt, HB_STACK_SIZE - 64 * 1024);
    ctx = JS_NewContext(rt);
    if (!rt || !ctx)
        hb_fail_init("cannot create the JavaScript runtime");
    hb_load_prelude();
    size_t len = 0;
    char *source = hb_read_all_stdin(&len);
    if (!source)
        hb_fail_init("cannot read the bundle");
    /* Must match FUNCTION_MARKER in src/compile/_js_bundle.ts. */
    static const char marker[] = "//hookbox:function\n";
    function_style = len >= sizeof(marker) - 1 && memcmp(source, marker, sizeof(marker) - 1) == 0;
    bundle = JS_Eval(ctx, source, len, "hook.js",
                     JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_COMPILE_ONLY);
    free(source);
    if (JS_IsException(bundle))
        hb_fail_init("the bundle does not compile");
    if (function_style)
        hb_evaluate_function_hook();
    JS_SetHostPromiseRejectionTracker(rt, hb_rejection, NULL);
    JS_RunGC(rt);
    /* A hook run is short and reference counting frees most garbage: only
       collect cycles once the run allocated HB_GC_HEADROOM more bytes. */
    JSMemoryUsage usage;
    JS_ComputeMemoryUsage(rt, &usage);
    JS_SetGCThreshold(rt, (size_t)usage.malloc_size + HB_GC_HEADROOM);
    hb_arena_create();
    hb_freeze_atoms(rt);
    ready = 1;
}

/* Reports an uncaught error through the prelude and exits. */
static void hb_die(void)
{
    JSValue error = JS_GetException(ctx);
    if (hb_was_interrupted()) {
        fputs("hookbox: JavaScript stopped: the call's time or fuel budget is spent\n", stderr);
        _Exit(HB_EXIT_INTERRUPTED);
    }
    JSValue code = hb_loop_call(HB_FATAL, 1, (JSValueConst[]){ error });
    int n = 1;
    if (JS_IsException(code))
        hb_report(ctx, error);
    else
        JS_ToInt32(ctx, &n, code);
    _Exit(n);
}

static void hb_drain_jobs(void)
{
    if (hb_run_jobs() < 0)
        hb_die();
}

/* The WASI command entry: run the hook once against the event on stdin. */
__attribute__((export_name("_start")))
void hb_start(void)
{
    if (!ready) {
        fputs("hookbox engine: not initialised (build the plugin with wizer)\n", stderr);
        _Exit(70);
    }
    JS_UpdateStackTop(rt);
    hb_arena_begin();
    hb_interrupt_install(rt);
    JS_FreeValue(ctx, hb_loop_call(HB_START, 0, NULL));
    if (function_style) {
        JSValue called = hb_loop_call(HB_CALL, 1, (JSValueConst[]){ hook_fn });
        if (JS_IsException(called))
            hb_die();
        JS_FreeValue(ctx, called);
    } else {
        /* A script with top-level await is wrapped in an async function
           and gives its promise; one without runs synchronously (see
           src/compile/_js_bundle.ts) and gives nothing to track. */
        JSValue promise = JS_EvalFunction(ctx, bundle);
        bundle = JS_UNDEFINED;
        if (JS_IsException(promise))
            hb_die();
        if (!JS_IsUndefined(promise)) {
            JSValue tracked = hb_loop_call(HB_TRACK, 1, (JSValueConst[]){ promise });
            if (JS_IsException(tracked))
                hb_die();
            JS_FreeValue(ctx, tracked);
        }
        JS_FreeValue(ctx, promise);
    }
    for (;;) {
        hb_drain_jobs();
        JSValue more = hb_loop_call(HB_TICK, 0, NULL);
        if (JS_IsException(more))
            hb_die();
        int again = JS_ToBool(ctx, more);
        JS_FreeValue(ctx, more);
        if (!again)
            break;
    }
    JSValue code = hb_loop_call(HB_FINISH, 0, NULL);
    if (JS_IsException(code))
        hb_die();
    int n = 0;
    JS_ToInt32(ctx, &n, code);
    /* Returning from _start is exit status 0 without the host unwinding the
       call through proc_exit; nothing is buffered (output goes out as it is
       written). */
    if (n == 0)
        return;
    _Exit(n);
}
