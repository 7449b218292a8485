// SPDX-License-Identifier: BSD-3-Clause
/* bfo_test_stderr.h - what a library writes on stderr, read by the test
 * (test_net.c, test_net_abi.c, test_shm.c, test_tcp_ports.c): stderr goes
 * to a temporary file from stderr_catch to stderr_caught, which gives it
 * back as a string.  The including test defines what its stdio needs of
 * fileno (_GNU_SOURCE or _POSIX_C_SOURCE) before its includes. */
#ifndef BFO_TEST_STDERR_H
#define BFO_TEST_STDERR_H

#include "bfo_test.h"

#include <stdio.h>
#include <unistd.h>

typedef struct stderr_catch_t {
    FILE *tmp;
    int saved; /* descriptor 2 as it was */
} stderr_catch_t;

/* From here on, what goes to stderr goes to c's file. */
static inline void stderr_catch(stderr_catch_t *c)
{
    c->tmp = tmpfile();
    assert_non_null(c->tmp);
    c->saved = dup(2);
    fflush(stderr);
    dup2(fileno(c->tmp), 2);
}

/* stderr back; what it took in buf (at most cap - 1 bytes, then a NUL).
 * Returns the bytes read. */
static inline size_t stderr_caught(stderr_catch_t *c, char *buf, size_t cap)
{
    size_t n;
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    rewind(c->tmp);
    n = fread(buf, 1, cap - 1, c->tmp);
    buf[n] = 0;
    fclose(c->tmp);
    return n;
}

#endif /* BFO_TEST_STDERR_H */
