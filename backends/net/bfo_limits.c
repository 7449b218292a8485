// SPDX-License-Identifier: BSD-3-Clause
/* bfo_limits.c - the process's limits against what the job will hold (see
 * bfo_limits.h). */
#define _GNU_SOURCE
#include "bfo_limits.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* n with thousands separated ("2,131"), or "unlimited". */
static const char *num(uint64_t n, char *b, size_t cap)
{
    char t[32];
    int len, k = 0;
    if (n == BFO_LIMIT_NONE) {
        snprintf(b, cap, "unlimited");
        return b;
    }
    len = snprintf(t, sizeof t, "%llu", (unsigned long long)n);
    for (int i = 0; i < len && (size_t)k + 2 < cap; i++) {
        if (i && (len - i) % 3 == 0)
            b[k++] = ',';
        b[k++] = t[i];
    }
    b[k] = 0;
    return b;
}

/* a * b + c, saturating (an absurd row must not wrap to a small need). */
static uint64_t mul_add(uint64_t a, uint64_t b, uint64_t c)
{
    if (a && b > (UINT64_MAX - c) / a)
        return UINT64_MAX;
    return a * b + c;
}

static uint64_t add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

static void cat(char *why, size_t cap, const char *fmt, const char *a, const char *b, const char *c)
{
    size_t l;
    if (!why || !cap)
        return;
    l = strlen(why);
    if (l < cap)
        snprintf(why + l, cap - l, fmt, a, b, c);
}

/* One part's sum of per_peer x peers x rails + per_rail x rails + once,
 * said as "NAME: P peers x R rails x A + R rails x B + C" (terms of 0 left out). */
static uint64_t part_sum(const bfo_limits_part *p, uint64_t per_peer, uint64_t per_rail, uint64_t once, int unit_bytes,
                         char *why, size_t cap)
{
    uint64_t r = (uint64_t)(p->nrails > 0 ? p->nrails : 0);
    uint64_t s = add(mul_add(mul_add(p->peers, r, 0), per_peer, 0), add(mul_add(r, per_rail, 0), once));
    char a[32], b[32], c[32];
    const char *sep = "";
    if (!s)
        return 0;
    cat(why, cap, "%s%s:", why && *why ? "; " : "", p->name ? p->name : "?", "");
    if (per_peer && p->peers) {
        cat(why, cap, " %s peer%s x %s", num(p->peers, a, sizeof a), p->peers == 1 ? "" : "s", num(r, b, sizeof b));
        cat(why, cap, " rail%s x %s%s", r == 1 ? "" : "s", num(per_peer, c, sizeof c), unit_bytes ? " bytes" : "");
        sep = " +";
    }
    if (per_rail) {
        cat(why, cap, "%s %s rail%s", sep, num(r, a, sizeof a), r == 1 ? "" : "s");
        cat(why, cap, " x %s%s%s", num(per_rail, a, sizeof a), unit_bytes ? " bytes" : "", "");
        sep = " +";
    }
    if (once)
        cat(why, cap, "%s %s%s", sep, num(once, a, sizeof a), unit_bytes ? " bytes" : "");
    return s;
}

uint64_t bfo_limits_fds(const bfo_limits_part *p, int n, uint64_t open_now, char *why, size_t cap)
{
    uint64_t s = 0;
    char a[32];
    if (why && cap)
        why[0] = 0;
    for (int i = 0; i < n; i++)
        s = add(s, part_sum(&p[i], p[i].need.fds_peer, p[i].need.fds_rail, p[i].need.fds, 0, why, cap));
    cat(why, cap, "%s%s open now; ", why && *why ? "; " : "", num(open_now, a, sizeof a), "");
    cat(why, cap, "%s spare%s%s", num(BFO_LIMITS_SPARE_FDS, a, sizeof a), "", "");
    return add(s, add(open_now, BFO_LIMITS_SPARE_FDS));
}

uint64_t bfo_limits_locked(const bfo_limits_part *p, int n, char *why, size_t cap)
{
    uint64_t s = 0;
    if (why && cap)
        why[0] = 0;
    for (int i = 0; i < n; i++)
        s = add(s, part_sum(&p[i], p[i].need.locked_peer, p[i].need.locked_rail, p[i].need.locked, 1, why, cap));
    return s;
}

bfo_limit_verdict bfo_limit_decide(uint64_t need, uint64_t soft, uint64_t hard)
{
    if (need <= soft)
        return BFO_LIMIT_OK;
    if (need <= hard)
        return BFO_LIMIT_RAISE;
    return BFO_LIMIT_SHORT;
}

/* ----------------------------------------------------- the real system */

static uint64_t from_rlim(rlim_t v) { return v == RLIM_INFINITY ? BFO_LIMIT_NONE : (uint64_t)v; }
static rlim_t to_rlim(uint64_t v) { return v == BFO_LIMIT_NONE ? RLIM_INFINITY : (rlim_t)v; }

static int sys_get(int resource, uint64_t *soft, uint64_t *hard)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0)
        return -1;
    *soft = from_rlim(rl.rlim_cur);
    *hard = from_rlim(rl.rlim_max);
    return 0;
}

static int sys_set(int resource, uint64_t soft, uint64_t hard)
{
    struct rlimit rl;
    rl.rlim_cur = to_rlim(soft);
    rl.rlim_max = to_rlim(hard);
    return setrlimit(resource, &rl);
}

/* CAP_IPC_LOCK (bit 14) in the effective set: the kernel pins any amount
 * for a registration then (RLIMIT_MEMLOCK is not applied). */
static int sys_cap_ipc_lock(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int yes = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "CapEff:", 7)) {
            unsigned long long caps = strtoull(line + 7, NULL, 16);
            yes = (caps >> 14) & 1;
            break;
        }
    fclose(f);
    return yes;
}

uint64_t bfo_limits_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    uint64_t n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n ? n - 1 : 0; /* not the directory's own */
}

int bfo_limits_mode(const char *s)
{
    if (!s)
        return 0;
    return !strcmp(s, "fail") ? BFO_LIMITS_FAIL : !strcmp(s, "warn") ? BFO_LIMITS_WARN
                                                : !strcmp(s, "off") ? BFO_LIMITS_OFF : 0;
}

/* ------------------------------------------------------------ the check */

typedef struct limit_desc {
    int resource;
    const char *what;  /* "open files" */
    const char *unit;  /* "" or " bytes" */
    const char *verb;  /* "hold" */
    int kib;           /* ulimit takes KiB */
    const char *flag, *systemd, *conf;
} limit_desc;

static const limit_desc NOFILE = { RLIMIT_NOFILE, "open files", "", "hold", 0, "-n", "LimitNOFILE", "nofile" };
static const limit_desc MEMLOCK = { RLIMIT_MEMLOCK, "locked memory", " bytes", "pin", 1, "-l", "LimitMEMLOCK",
                                    "memlock" };

/* One limit: raised, or short (said), or enough.  1 when short. */
static int one(const limit_desc *d, uint64_t need, const char *why, int mode, const bfo_limits_sys *sys, int rank,
               int log, FILE *f)
{
    uint64_t soft, hard;
    char a[32], b[32], c[32], e[32];
    bfo_limit_verdict v;
    if (sys->get(d->resource, &soft, &hard) != 0) {
        if (log >= 1 && f)
            fprintf(f, "bfo: rank %d: %s: the limit could not be read (%s): not checked\n", rank, d->what,
                    strerror(errno));
        return 0;
    }
    v = bfo_limit_decide(need, soft, hard);
    if (v == BFO_LIMIT_OK)
        return 0;
    if (v == BFO_LIMIT_RAISE) {
        if (sys->set(d->resource, need, hard) == 0) {
            if (log >= 1 && f)
                fprintf(f, "bfo: rank %d: %s: soft limit raised from %s to %s%s (hard %s): this job may %s up to "
                           "%s (%s)\n", rank, d->what, num(soft, a, sizeof a), num(need, b, sizeof b), d->unit,
                        num(hard, c, sizeof c), d->verb, num(need, e, sizeof e), why);
            return 0;
        }
        if (log >= 1 && f)
            fprintf(f, "bfo: rank %d: %s: raising the soft limit from %s to %s failed: %s\n", rank, d->what,
                    num(soft, a, sizeof a), num(need, b, sizeof b), strerror(errno));
    } else if (mode == BFO_LIMITS_WARN && soft < hard) {
        (void)sys->set(d->resource, hard, hard); /* as far as it goes: a warning, and the most it can have */
    }
    if (f) { /* said at every log level: a caller that silences what bfo handles needs this one */
        uint64_t set = d->kib ? (need + 1023) / 1024 : need;
        char s[32]; /* plain digits: what the commands take */
        snprintf(s, sizeof s, "%llu", (unsigned long long)set);
        snprintf(e, sizeof e, "%llu", (unsigned long long)need);
        fprintf(f,
                "bfo: rank %d: %s: this job may %s up to %s%s (%s; an upper bound: every peer connected on "
                "every rail); the limit is %s (hard %s): raise it with ulimit %s %s%s where the ranks start, "
                "%s=%s under systemd or %s in /etc/security/limits.conf, or use fewer rails or ranks%s\n",
                rank, d->what, d->verb, num(need, a, sizeof a), d->unit, why, num(soft, b, sizeof b),
                num(hard, c, sizeof c), d->flag, s, d->kib ? " (KiB)" : "", d->systemd, d->kib ? e : s, d->conf,
                mode == BFO_LIMITS_WARN ? "; going on (BFO_LIMITS=warn)"
                                        : "; BFO_LIMITS=warn (MPI: --mca pml_bfo_limits warn) goes on anyway");
    }
    return 1;
}

int bfo_limits_check(const bfo_limits_part *p, int n, uint64_t open_now, int mode, const bfo_limits_sys *sys_in,
                     int rank, int log, FILE *f)
{
    bfo_limits_sys sys = { sys_get, sys_set, sys_cap_ipc_lock };
    char why[512];
    uint64_t need;
    int shorts = 0;
    if (mode == BFO_LIMITS_OFF)
        return BFO_OK;
    if (sys_in) {
        if (sys_in->get)
            sys.get = sys_in->get;
        if (sys_in->set)
            sys.set = sys_in->set;
        if (sys_in->cap_ipc_lock)
            sys.cap_ipc_lock = sys_in->cap_ipc_lock;
    }
    need = bfo_limits_fds(p, n, open_now, why, sizeof why);
    shorts += one(&NOFILE, need, why, mode, &sys, rank, log, f);
    need = bfo_limits_locked(p, n, why, sizeof why);
    if (need && !sys.cap_ipc_lock())
        shorts += one(&MEMLOCK, need, why, mode, &sys, rank, log, f);
    return shorts && mode != BFO_LIMITS_WARN ? BFO_ERR_INVALID : BFO_OK;
}
