// SPDX-License-Identifier: BSD-3-Clause
/* bfo_setting.h - a transport's tunables as data, and the one strict parser
 * of their values.
 *
 * Part of bfo (see bfo.h).  Each transport describes what can be tuned in
 * its options struct (bfo_tcp_options, ...) in one table of bfo_setting
 * rows, given by its row in bfo_net's table of transports
 * (bfo_transport_ops.settings).  Whoever sets a transport's options reads
 * that table and names no transport:
 *   bfo_net        BFO_<TRANSPORT>_<NAME> from the environment, for every
 *                  member the caller left 0 (unless bfo_net_options.no_env);
 *   bfo run        --set TRANSPORT.NAME=VALUE, and --settings lists them;
 *   pml/bfo        the MCA parameters pml_bfo_<transport>_<name>.
 * All go through bfo_setting_parse (the same syntax and the same range
 * everywhere) and bfo_net_options_set (bfo_net.h).
 *
 * ADDING A TUNABLE to a transport: the member in its options struct (0
 * meaning the default, applied in its open), and one row in its table.
 *
 * VALUES (one parser per type; anything else is refused, with a sentence
 * that says what was expected: no silent 0)
 *   SIZE  bytes: decimal digits, then at most one of K, M, G (x1024^n),
 *         nothing after: 4096, 64K, 2M.
 *   INT   a decimal integer, optional '-' sign: 14, -1.
 *   MS    milliseconds: decimal digits with an optional fraction: 10,
 *         0.5; the member holds nanoseconds.
 *   BOOL  0 or 1.
 *   Each must lie in [min, max] (in the setting's unit).  A row with
 *   BFO_SETTING_OFF also takes "off", and 0, as "none" (-1 stored: a
 *   member where 0 means the default has no other way to say none).
 */
#ifndef BFO_SETTING_H
#define BFO_SETTING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bfo_setting_type {
    BFO_SETTING_SIZE = 1,
    BFO_SETTING_INT,
    BFO_SETTING_MS,
    BFO_SETTING_BOOL,
} bfo_setting_type;

/* flags */
#define BFO_SETTING_OFF 0x1u  /* "off" and 0 store -1 ("none"; the member is signed) */
#define BFO_SETTING_SAME 0x2u /* must be equal on every rank (a launcher or MPI layer
                               * gives every rank the same value) */

typedef struct bfo_setting {
    const char *name;      /* lower case, [a-z0-9_]: "beacon_ms" (BFO_TCP_BEACON_MS) */
    bfo_setting_type type;
    size_t offset, size;   /* the member of the options struct it sets (4 or 8 bytes) */
    double def;            /* the default the transport applies to a 0 member, in the
                            * setting's unit (for help and listings) */
    double min, max;       /* the range taken, in the setting's unit */
    unsigned flags;        /* BFO_SETTING_OFF, BFO_SETTING_SAME */
    const char *help;      /* one sentence, what it does and its unit */
} bfo_setting;

/* A row's position: BFO_SETTING_AT(bfo_tcp_options, beacon_interval_ns). */
#define BFO_SETTING_AT(type, member) offsetof(type, member), sizeof(((type *)0)->member)

/* The size at s: digits, then K, M or G; *end after it.  0, or -1 when s
 * has no digits there or the size overflows 64 bits.  For lists
 * ("8,4K,64K"): the caller checks what follows. */
int bfo_size_prefix(const char *s, const char **end, unsigned long long *out);
/* The whole of s a size from min to max: 0, or -1. */
int bfo_parse_size(const char *s, unsigned long long min, unsigned long long max, unsigned long long *out);

/* v parsed as s says and stored in its member of opts (the transport's
 * options struct).  0, or -1 with why (a sentence naming the range and
 * the syntax, without the setting's name) when v is not a value of it. */
int bfo_setting_parse(const bfo_setting *s, const char *v, void *opts, char *why, size_t cap);
/* 1 when the member of opts is 0 (the caller left it to the default). */
int bfo_setting_unset(const bfo_setting *s, const void *opts);
/* The type's name: "size", "int", "ms", "bool". */
const char *bfo_setting_type_name(bfo_setting_type t);

#ifdef __cplusplus
}
#endif
#endif /* BFO_SETTING_H */
