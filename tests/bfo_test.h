// SPDX-License-Identifier: BSD-3-Clause
/* bfo_test.h - what the bfo tests share: cmocka, named tests built at run
 * time from tables, and actions written as strings ("reset accept_rndv"). */
#ifndef BFO_TEST_H
#define BFO_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bfo.h"

/* A growing list of cmocka tests whose names are built at run time. */
typedef struct test_list {
    struct CMUnitTest *tests;
    size_t n, cap;
} test_list;

static inline void test_list_add(test_list *l, CMUnitTestFunction fn, void *state,
                          const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->tests = (struct CMUnitTest *)realloc(l->tests, l->cap * sizeof *l->tests);
        if (!l->tests)
            abort();
    }
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    memset(&l->tests[l->n], 0, sizeof l->tests[l->n]);
    {
        size_t len = strlen(buf) + 1;
        char *name = (char *)malloc(len);
        if (!name)
            abort();
        memcpy(name, buf, len);
        l->tests[l->n].name = name;
    }
    l->tests[l->n].test_func = fn;
    l->tests[l->n].initial_state = state;
    l->n++;
}

/* Runs the tests, then frees the list (valgrind's leak check is in CI). */
static inline int test_list_run(test_list *l, const char *group)
{
    int rc = _cmocka_run_group_tests(group, l->tests, l->n, NULL, NULL);
    for (size_t i = 0; i < l->n; i++)
        free((void *)(uintptr_t)l->tests[i].name);
    free(l->tests);
    l->tests = NULL;
    l->n = l->cap = 0;
    return rc;
}

/* The actions of a step as their spec names, space separated. */
static inline void actions_str(const bfo_machine *m, const bfo_step *st, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < st->n_actions; i++) {
        int n = snprintf(buf + len, cap - len, "%s%s", i ? " " : "",
                         m->action_names[st->actions[i]]);
        if (n < 0 || (size_t)n >= cap - len)
            break;
        len += (size_t)n;
    }
}

#endif /* BFO_TEST_H */
