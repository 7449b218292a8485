// SPDX-License-Identifier: BSD-3-Clause
/* net_abi_caller.c - a program's call of bfo_net_init, compiled with its
 * own layout options (tests/test_net_abi.c; the Makefile builds it once
 * with the build's options and once with another BFO_MAX_RAILS). */
#include "bfo_net.h"

#include <string.h>

int NET_ABI_FN(void)
{
    bfo_config cfg;
    bfo_net *n = NULL;
    int rc;
    memset(&cfg, 0, sizeof cfg);
    rc = bfo_net_init(&n, &cfg, NULL);
    if (rc == BFO_OK)
        bfo_net_fini(n);
    return rc;
}
