// SPDX-License-Identifier: BSD-3-Clause
/* bfo_limits.h - the process's limits against what the job will hold.
 *
 * Part of bfo (see bfo.h).  A large job meets two limits of the process
 * that nothing said anything about until a socket() or a registration
 * failed, somewhere in the middle of a run: RLIMIT_NOFILE (1,024 open
 * files by default; 1,024 ranks on 2 TCP rails need more sockets than
 * that) and RLIMIT_MEMLOCK (what RDMA may pin; Debian's 8 MiB).  bfo_net
 * checks both at init, after the rails are grouped per transport and
 * before any transport opens (bfo_net.h, LIMITS):
 *
 *   the need   each transport's row says what it holds (bfo_transport_need,
 *              bfo_transport.h: per peer per rail, per rail, once); the
 *              sum over the rail list, with the descriptors open now and
 *              LIMITS_SPARE_FDS more for the program.  An upper bound:
 *              every peer connected on every rail.
 *   decision   need <= soft limit: nothing to do.  soft < need <= hard:
 *              the soft limit is raised to the need (said at log level 1).
 *              hard < need: one message naming the limit, the need and how
 *              it was counted, the limits, and what to set; init fails
 *              (mode fail, the default), or goes on (warn).  The hard limit
 *              is never raised, even where the process could (root): it is
 *              the administrator's.
 *   memlock    only when a transport pins memory, and not with
 *              CAP_IPC_LOCK (the kernel does not apply the limit then).
 *
 * The computation and the decision are functions of data (a fake
 * getrlimit/setrlimit is injected through bfo_limits_sys): tests/
 * test_limits.c.
 */
#ifndef BFO_LIMITS_H
#define BFO_LIMITS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bfo_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* bfo_net_options.limits and BFO_LIMITS (fail, warn, off) */
#define BFO_LIMITS_FAIL 1
#define BFO_LIMITS_WARN 2
#define BFO_LIMITS_OFF (-1)

/* Descriptors counted for the program beyond those open at init (files it
 * opens later, bfo_net's wake-ups, the launcher's). */
#define BFO_LIMITS_SPARE_FDS 32

/* No limit (RLIM_INFINITY), as these functions take it. */
#define BFO_LIMIT_NONE UINT64_MAX

/* One transport of the rail list: what its row said for its rails. */
typedef struct bfo_limits_part {
    const char *name; /* "tcp" */
    int nrails;       /* its rails */
    uint64_t peers;   /* the peers it may reach: size - 1, or the other ranks on this host (host_only) */
    bfo_transport_need need;
} bfo_limits_part;

/* The descriptors the job may hold: the parts' sum, plus open_now (those
 * open already) and BFO_LIMITS_SPARE_FDS.  why: how it was counted
 * ("tcp: 1,023 peers x 2 rails x 1 + 2 rails x 2 + 1; 12 open now; 32
 * spare"). */
uint64_t bfo_limits_fds(const bfo_limits_part *p, int n, uint64_t open_now, char *why, size_t cap);
/* The bytes the job may lock: the parts' sum (0: nothing pinned); why as above. */
uint64_t bfo_limits_locked(const bfo_limits_part *p, int n, char *why, size_t cap);

typedef enum bfo_limit_verdict {
    BFO_LIMIT_OK = 0, /* need <= soft */
    BFO_LIMIT_RAISE,  /* soft < need <= hard: raise the soft limit to the need */
    BFO_LIMIT_SHORT,  /* hard < need */
} bfo_limit_verdict;

/* The decision for one limit (BFO_LIMIT_NONE: unlimited). */
bfo_limit_verdict bfo_limit_decide(uint64_t need, uint64_t soft, uint64_t hard);

/* What the check calls of the system (NULL, or a NULL member: the real
 * getrlimit, setrlimit, CAP_IPC_LOCK from /proc/self/status).  resource:
 * RLIMIT_NOFILE or RLIMIT_MEMLOCK; soft and hard in BFO_LIMIT_NONE terms.
 * 0, or -1 (errno set). */
typedef struct bfo_limits_sys {
    int (*get)(int resource, uint64_t *soft, uint64_t *hard);
    int (*set)(int resource, uint64_t soft, uint64_t hard);
    int (*cap_ipc_lock)(void); /* 1: the process may lock any amount */
} bfo_limits_sys;

/* Both limits checked against the parts' need, each raised where the hard
 * limit allows (mode fail or warn), said on f (rank names the rank): a
 * raise when log >= 1, a short limit at every log level (a layer that
 * silences what bfo handles itself, pml/bfo at verbose 0, still needs it).  BFO_OK, or BFO_ERR_INVALID when a limit is short and mode
 * is BFO_LIMITS_FAIL.  BFO_LIMITS_OFF: BFO_OK, nothing looked at. */
int bfo_limits_check(const bfo_limits_part *p, int n, uint64_t open_now, int mode, const bfo_limits_sys *sys,
                     int rank, int log, FILE *f);

/* The descriptors this process has open now (/proc/self/fd; 0 when that
 * cannot be read). */
uint64_t bfo_limits_open_fds(void);
/* "fail", "warn", "off" -> BFO_LIMITS_*; 0 for anything else. */
int bfo_limits_mode(const char *s);

#ifdef __cplusplus
}
#endif
#endif /* BFO_LIMITS_H */
