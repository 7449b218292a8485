// SPDX-License-Identifier: BSD-3-Clause
/* fuzz.h - what the fuzz targets share (tests/fuzz/).
 *
 * Each target defines LLVMFuzzerTestOneInput.  Built with clang and
 * -fsanitize=fuzzer,address,undefined by `make fuzz`; built with the
 * project's compiler and replay.c as its main by `make check`, which runs
 * every file of the target's corpus through it.  A broken invariant is
 * FUZZ_CHECK: it prints what broke and aborts, which libFuzzer reports as a
 * crash with the input that caused it.
 */
#ifndef BFO_FUZZ_H
#define BFO_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The harness's own checking code: no coverage feedback from it (libFuzzer
 * should steer by the code under test, and comparisons in loops over
 * buffers cost time and fill its dictionary with pointers). */
#if defined(__clang__)
#define FUZZ_NOCOV __attribute__((no_sanitize("coverage")))
#else
#define FUZZ_NOCOV
#endif

#define FUZZ_CHECK(cond, ...)                                                   \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

/* Reads the input one field at a time; past the end every read is 0. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t n, off;
} fuzz_in;

static inline int fuzz_more(const fuzz_in *in) { return in->off < in->n; }

static inline uint8_t fuzz_u8(fuzz_in *in) { return in->off < in->n ? in->p[in->off++] : 0; }

static inline uint16_t fuzz_u16(fuzz_in *in)
{
    uint16_t v = fuzz_u8(in);
    return (uint16_t)(v | (uint16_t)(fuzz_u8(in) << 8));
}

/* Up to n bytes of input (fewer at its end): *got of them at the pointer. */
static inline const uint8_t *fuzz_bytes(fuzz_in *in, size_t n, size_t *got)
{
    const uint8_t *p = in->p + in->off;
    if (n > in->n - in->off)
        n = in->n - in->off;
    in->off += n;
    *got = n;
    return p;
}

#endif /* BFO_FUZZ_H */
