// SPDX-License-Identifier: BSD-3-Clause
/* replay.c - a fuzz target's corpus, without libFuzzer: every file of
 * tests/fuzz/corpus/<target>/ (or of the directories and files given as
 * arguments) goes through LLVMFuzzerTestOneInput once, in an exact-size
 * heap buffer.  Linked with one target (-DFUZZ_TARGET='"wire"') by `make`,
 * run by `make check` as one cmocka test; a broken invariant aborts.
 * A target that cannot run here (fuzz_tcp_frames without a loopback
 * interface) defines fuzz_unavailable() and the test is skipped. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "fuzz.h"

#ifndef FUZZ_TARGET
#error "define FUZZ_TARGET as the target's name, e.g. -DFUZZ_TARGET='\"wire\"'"
#endif

/* Optional: a reason the target cannot run on this machine, or NULL. */
const char *fuzz_unavailable(void) __attribute__((weak));

static int g_argc;
static char **g_argv;
static unsigned long g_files;

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    uint8_t *buf;
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    buf = (uint8_t *)malloc(n ? (size_t)n : 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    g_files++;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void run_path(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(stat(path, &st), 0);
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    d = opendir(path);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) { /* in name order: the same run everywhere */
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = (char **)realloc(names, cap * sizeof *names);
            assert_non_null(names);
        }
        names[n] = (char *)malloc(strlen(path) + strlen(de->d_name) + 2);
        assert_non_null(names[n]);
        sprintf(names[n], "%s/%s", path, de->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        run_file(names[i]);
        free(names[i]);
    }
    free(names);
}

static void test_every_corpus_input_runs_clean(void **state)
{
    (void)state;
    if (fuzz_unavailable && fuzz_unavailable()) {
        printf("fuzz_%s: %s\n", FUZZ_TARGET, fuzz_unavailable());
        skip();
    }
    if (g_argc > 1)
        for (int i = 1; i < g_argc; i++)
            run_path(g_argv[i]);
    else
        run_path("tests/fuzz/corpus/" FUZZ_TARGET);
    assert_true(g_files > 0); /* an empty corpus proves nothing */
    printf("fuzz_%s: %lu corpus inputs replayed, every invariant held\n", FUZZ_TARGET, g_files);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_corpus_input_runs_clean),
    };
    g_argc = argc;
    g_argv = argv;
    return cmocka_run_group_tests_name("fuzz_" FUZZ_TARGET "_corpus", tests, NULL, NULL);
}
