// SPDX-License-Identifier: BSD-3-Clause
/* abi_caller.c - one caller of tests/test_abi.c, compiled with its own
 * layout options (see abi_caller.h; the Makefile sets ABI_CALLER and the
 * -D options).  Everything here is laid out as this unit sees bfo's
 * structs. */
#include <stdlib.h>
#include <string.h>

#include "abi_caller.h"

#ifndef ABI_CALLER
#error "compile with -DABI_CALLER=NAME (the Makefile's ABI_CALLERS)"
#endif
#define ABI__CAT(a, b) a##b
#define ABI__NAME(a, b) ABI__CAT(a, b)
#define ABI__STR(a) #a
#define ABI__QUOTE(a) ABI__STR(a)
#define ME(x) ABI__NAME(x, ABI__NAME(_, ABI_CALLER)) /* x_rails16 */

#define GUARD 64
#define PATTERN 0xa5

static const bfo_abi *ME(here)(void) { return BFO_ABI_HERE; }

static int ME(post_send)(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt,
                         uint64_t token)
{
    (void)ctx, (void)peer, (void)rail, (void)iov, (void)iovcnt, (void)token;
    return 0;
}

static int ME(init_through)(abi_lib_init_fn lib_init, int *touched, int *nrails)
{
    /* the engine as this unit lays it out, a guard after it */
    static union {
        bfo_engine e;
        unsigned char b[sizeof(bfo_engine) + GUARD];
    } u;
    bfo_config cfg;
    bfo_backend be;
    memset(&cfg, 0, sizeof cfg);
    memset(&be, 0, sizeof be);
    cfg.rank = 0;
    cfg.nranks = 2;
    cfg.nrails = 1;
    cfg.max_requests = 4;
    cfg.max_unexpected = 4;
    be.post_send = ME(post_send);
    size_t need = bfo_engine_mem_size(&cfg); /* as this unit computes it */
    void *mem = malloc(need);
    memset(u.b, PATTERN, sizeof u.b);
    int rc = lib_init(&u.e, &cfg, &be, mem, need, BFO_ABI_HERE);
    *touched = 0;
    for (size_t i = 0; i < sizeof u.b; i++)
        if (u.b[i] != PATTERN)
            *touched = 1;
    *nrails = rc == BFO_OK ? u.e.cfg.nrails : -1;
    free(mem);
    return rc;
}

const abi_caller ME(abi_caller) = {
    ABI__QUOTE(ABI_CALLER), BFO_MAX_RAILS, BFO_MAX_ACTIONS, sizeof(bfo_engine),
    ME(here), ME(init_through),
};
