// SPDX-License-Identifier: BSD-3-Clause
/* bfo_setting.c - the one strict parser of settings (see bfo_setting.h). */
#include "bfo_setting.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

int bfo_size_prefix(const char *s, const char **end, unsigned long long *out)
{
    unsigned long long x = 0;
    const char *p = s;
    int shift = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (x > (UINT64_MAX - (unsigned)(*p - '0')) / 10)
            return -1;
        x = x * 10 + (unsigned)(*p - '0');
    }
    switch (*p) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    default: break;
    }
    if (shift) {
        if (x > UINT64_MAX >> shift)
            return -1;
        x <<= shift;
        p++;
    }
    *end = p;
    *out = x;
    return 0;
}

int bfo_parse_size(const char *s, unsigned long long min, unsigned long long max, unsigned long long *out)
{
    const char *end;
    unsigned long long x;
    if (!s || bfo_size_prefix(s, &end, &x) != 0 || *end || x < min || x > max)
        return -1;
    *out = x;
    return 0;
}

/* A decimal integer, the whole string: 0, or -1. */
static int parse_int(const char *s, long long *out)
{
    int neg = *s == '-';
    unsigned long long x = 0;
    const char *p = s + neg;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (x > (unsigned long long)INT64_MAX / 10)
            return -1;
        x = x * 10 + (unsigned)(*p - '0');
    }
    if (*p || x > (unsigned long long)INT64_MAX)
        return -1;
    *out = neg ? -(long long)x : (long long)x;
    return 0;
}

/* Milliseconds: digits, an optional fraction; the whole string.  In ns. */
static int parse_ms(const char *s, double *ms)
{
    double x = 0, scale = 1;
    const char *p = s;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++)
        x = x * 10 + (*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            x += (*p - '0') * (scale /= 10);
    if (!digits || *p || x > 1e12)
        return -1;
    *ms = x;
    return 0;
}

static void store(const bfo_setting *s, void *opts, long long v)
{
    char *m = (char *)opts + s->offset;
    if (s->size == 8) {
        int64_t x = (int64_t)v;
        memcpy(m, &x, 8);
    } else if (s->size == 4) {
        int32_t x = (int32_t)v;
        memcpy(m, &x, 4);
    }
}

static long long load(const bfo_setting *s, const void *opts, int *neg)
{
    const char *m = (const char *)opts + s->offset;
    /* only a row with BFO_SETTING_OFF stores a negative value (-1): the
     * member is signed then; otherwise read it as unsigned */
    if (s->size == 8) {
        int64_t x;
        memcpy(&x, m, 8);
        *neg = (s->flags & BFO_SETTING_OFF) && x < 0;
        return *neg ? -1 : (long long)(uint64_t)x;
    }
    {
        int32_t x;
        memcpy(&x, m, 4);
        *neg = (s->flags & BFO_SETTING_OFF) && x < 0;
        return *neg ? -1 : (long long)(uint32_t)x;
    }
}

const char *bfo_setting_type_name(bfo_setting_type t)
{
    return t == BFO_SETTING_SIZE ? "size" : t == BFO_SETTING_INT ? "int" : t == BFO_SETTING_MS ? "ms"
                                         : t == BFO_SETTING_BOOL ? "bool" : "?";
}

static void say(char *why, size_t cap, const bfo_setting *s)
{
    const char *off = s->flags & BFO_SETTING_OFF ? ", or off" : "";
    if (!why || !cap)
        return;
    switch (s->type) {
    case BFO_SETTING_SIZE:
        snprintf(why, cap, "not a size from %.0f to %.0f bytes (digits, then K, M or G)%s", s->min, s->max, off);
        break;
    case BFO_SETTING_MS:
        snprintf(why, cap, "not a number of milliseconds from %g to %g%s", s->min, s->max, off);
        break;
    case BFO_SETTING_BOOL:
        snprintf(why, cap, "not 0 or 1");
        break;
    default:
        snprintf(why, cap, "not an integer from %.0f to %.0f%s", s->min, s->max, off);
        break;
    }
}

int bfo_setting_parse(const bfo_setting *s, const char *v, void *opts, char *why, size_t cap)
{
    unsigned long long u;
    long long i;
    double ms;
    if (!v || (s->size != 4 && s->size != 8))
        goto bad;
    if ((s->flags & BFO_SETTING_OFF) && (!strcmp(v, "off") || !strcmp(v, "0"))) {
        store(s, opts, -1);
        return 0;
    }
    switch (s->type) {
    case BFO_SETTING_SIZE:
        if (bfo_parse_size(v, (unsigned long long)s->min, (unsigned long long)s->max, &u) != 0)
            goto bad;
        store(s, opts, (long long)u);
        return 0;
    case BFO_SETTING_MS:
        if (parse_ms(v, &ms) != 0 || ms < s->min || ms > s->max || ms * 1e6 < 1)
            goto bad;
        store(s, opts, (long long)(ms * 1e6 + 0.5));
        return 0;
    case BFO_SETTING_BOOL:
        if (strcmp(v, "0") && strcmp(v, "1"))
            goto bad;
        store(s, opts, v[0] == '1');
        return 0;
    case BFO_SETTING_INT:
        if (parse_int(v, &i) != 0 || (double)i < s->min || (double)i > s->max)
            goto bad;
        store(s, opts, i);
        return 0;
    }
bad:
    say(why, cap, s);
    return -1;
}

int bfo_setting_unset(const bfo_setting *s, const void *opts)
{
    int neg;
    return load(s, opts, &neg) == 0;
}
