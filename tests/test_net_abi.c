// SPDX-License-Identifier: BSD-3-Clause
/* test_net_abi.c - bfo_net_init refuses a program compiled with another
 * layout (BFO_MAX_RAILS) than the library it links, and names the
 * difference; the same layout is accepted.  Linked with libbfo_net.a as
 * built; the callers are tests/net_abi_caller.c compiled twice. */
#define _GNU_SOURCE
#include "bfo_test.h"
#include "bfo_test_stderr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int net_abi_same(void);  /* compiled with this build's options */
int net_abi_other(void); /* compiled with another BFO_MAX_RAILS */

/* Runs f with stderr into a buffer. */
static int with_stderr(int (*f)(void), char *buf, size_t cap)
{
    stderr_catch_t c;
    int rc;
    stderr_catch(&c);
    rc = f();
    stderr_caught(&c, buf, cap);
    return rc;
}

/* one rank, one loopback rail: bfo_net_init can succeed without a job */
static void one_rank(void)
{
    setenv("BFO_RANK", "0", 1);
    setenv("BFO_SIZE", "1", 1);
    setenv("BFO_RAILS", "127.0.0.1", 1);
    unsetenv("BFO_BOOTSTRAP");
}

static void bfo_net_init_refuses_a_caller_built_with_other_max_rails(void **state)
{
    char err[4096];
    (void)state;
    one_rank();
    assert_int_equal(with_stderr(net_abi_other, err, sizeof err), BFO_ERR_ABI);
    assert_non_null(strstr(err, "BFO_MAX_RAILS is"));
    assert_non_null(strstr(err, "in the caller"));
    assert_non_null(strstr(err, "in the library"));
}

static void bfo_net_init_takes_a_caller_built_with_the_same_layout(void **state)
{
    char err[4096];
    (void)state;
    one_rank();
    assert_int_equal(with_stderr(net_abi_same, err, sizeof err), BFO_OK);
    assert_null(strstr(err, "BFO_MAX_RAILS is"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bfo_net_init_refuses_a_caller_built_with_other_max_rails),
        cmocka_unit_test(bfo_net_init_takes_a_caller_built_with_the_same_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
