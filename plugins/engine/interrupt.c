/*
 * hookbox JS engine: cooperative interruption.
 *
 * QuickJS polls an interrupt handler every few thousand bytecode operations.
 * Ours asks the host through the import `hookbox.should_interrupt`, which
 * answers 1 once the call's deadline passed or its fuel is spent; QuickJS
 * then throws an uncatchable error and `_start` exits with HB_EXIT_INTERRUPTED.
 */
#include "engine.h"

__attribute__((import_module("hookbox"), import_name("should_interrupt")))
extern int hb_import_should_interrupt(void);

static int interrupted;

static int hb_interrupt_handler(JSRuntime *rt, void *opaque)
{
    (void)rt;
    (void)opaque;
    if (hb_import_should_interrupt() != 0)
        interrupted = 1;
    return interrupted;
}

int hb_was_interrupted(void)
{
    return interrupted;
}

void hb_interrupt_install(JSRuntime *rt)
{
    interrupted = 0;
    JS_SetInterruptHandler(rt, hb_interrupt_handler, NULL);
}
