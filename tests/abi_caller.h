// SPDX-License-Identifier: BSD-3-Clause
/* abi_caller.h - the callers of tests/test_abi.c.
 *
 * tests/abi_caller.c is compiled once per caller (the Makefile's
 * ABI_CALLERS), each time with one layout option changed (BFO_MAX_RAILS,
 * BFO_MAX_ACTIONS) or none ("same"), and linked into test_abi, whose own
 * unit plays the library built with the build's layout.  Between the units
 * only void pointers pass: their bfo_engine types are not the same type.
 */
#ifndef ABI_CALLER_H
#define ABI_CALLER_H

#include <stddef.h>

#include "bfo_engine.h"

/* The library's init: bfo_engine_init_abi of the library's unit. */
typedef int (*abi_lib_init_fn)(void *engine, const bfo_config *cfg, const bfo_backend *be,
                               void *mem, size_t mem_len, const bfo_abi *caller);

typedef struct abi_caller {
    const char *name;          /* "rails16", ... */
    unsigned max_rails;        /* BFO_MAX_RAILS in the caller's unit */
    unsigned max_actions;      /* BFO_MAX_ACTIONS there */
    size_t sizeof_engine;      /* sizeof(bfo_engine) there */
    const bfo_abi *(*here)(void); /* BFO_ABI_HERE there */
    /* Sets up an engine of the caller's layout, with a guard after it, through
     * the library's init, as a program does through a library it links.
     * Returns what the init returns; *touched is 1 when a byte of the engine
     * or the guard changed, *nrails what the engine says its rails are
     * (read with the caller's layout; -1 when the init failed). */
    int (*init_through)(abi_lib_init_fn lib_init, int *touched, int *nrails);
} abi_caller;

extern const abi_caller abi_caller_same, abi_caller_rails16, abi_caller_rails2,
    abi_caller_actions8;

#endif /* ABI_CALLER_H */
