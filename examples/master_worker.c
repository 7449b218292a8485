// SPDX-License-Identifier: BSD-3-Clause
/* master_worker.c - a resilient master-worker over bfo: a worker's
 * process dies, the master and the other workers go on and finish the
 * work.
 *
 *   bfo run -n 4 --keep-going --rails 127.0.0.2,127.0.0.3 -- \
 *       ./master_worker [--tasks N] [--task-us U] [--say-ready]
 *
 * Rank 0 is the master; the others are workers.  The master hands out
 * tasks (sum of i*i over a range) on the group's context, one at a time to
 * each worker, and takes their results.  When a worker dies, `bfo run
 * --keep-going` tells the survivors (bfo_net takes the report: the peer is
 * FAILED, its operations end BFO_ERR_PROC_FAILED).  The master then:
 *   - acknowledges the failure (bfo_failure_ack);
 *   - revokes the group (bfo_group_revoke): every member's pending
 *     operations on it end BFO_ERR_REVOKED, so no worker waits on;
 *   - agrees with the survivors on who failed (bfo_group_agree) and makes
 *     the group of the survivors (bfo_group_shrink), as every worker does
 *     when its own operation ends revoked;
 *   - hands out again every task not done, on the new group.
 * At the end the master checks the total against the formula and prints
 * one line; every survivor exits 0.  The master's own death is not
 * survived (the work has one owner): documented, not handled.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_group.h"
#include "bfo_net.h"

#define TAG_TASK 1
#define TAG_RESULT 2
#define STOP UINT64_MAX

typedef struct mw {
    bfo_net *net;
    bfo_engine *e;
    bfo_group g[2];  /* the group now, the next (shrink) */
    int cur;
    uint32_t ctx;
    int me, size;
    unsigned task_us;
} mw;

static bfo_group *grp(mw *m) { return &m->g[m->cur]; }

/* Drives the network and the group once. */
static void step(mw *m)
{
    bfo_net_progress(m->net, 0);
    bfo_group_progress(grp(m), bfo_net_now());
}

static void wait_req(mw *m, const bfo_request *r)
{
    while (!bfo_test(r))
        step(m);
}

/* Revoked: agree with the survivors on who failed, and go on with the
 * group of the survivors (the next context).  Returns 0, or -1 when this
 * process must end (its agreement could not be made). */
static int repair(mw *m, int *lost)
{
    bfo_group *g = grp(m);
    int failed[BFO_GROUP_MAX], nf = 0, rc;
    uint32_t v;
    const uint64_t t0 = bfo_net_now();
    bfo_group_revoke(g, bfo_net_now()); /* it may be the first to know */
    bfo_failure_ack(m->e);
    if (bfo_group_agree(g, 1, bfo_net_now()) != BFO_OK)
        return -1;
    while (!bfo_group_progress(g, bfo_net_now()))
        bfo_net_progress(m->net, 0);
    rc = bfo_group_result(g, &v, failed, BFO_GROUP_MAX, &nf);
    if (rc != BFO_OK) {
        fprintf(stderr, "master_worker rank %d: the agreement failed: %s\n", m->me, bfo_errname(rc));
        return -1;
    }
    m->ctx++;
    if (bfo_group_shrink(g, &m->g[!m->cur], m->ctx, bfo_net_now()) != BFO_OK)
        return -1;
    bfo_group_fini(g, bfo_net_now());
    m->cur = !m->cur;
    if (lost)
        *lost = nf;
    fprintf(stderr, "master_worker rank %d: %d failed; the group goes on with %d ranks (context %u); "
            "revoke, agree and shrink took %.2f ms here\n",
            m->me, nf, grp(m)->n, m->ctx, (double)(bfo_net_now() - t0) / 1e6);
    return 0;
}

static uint64_t work(uint64_t task, unsigned us)
{
    const uint64_t from = task * 1000, to = from + 1000;
    uint64_t sum = 0, t0 = bfo_net_now();
    for (uint64_t i = from; i < to; i++)
        sum += i * i;
    while (bfo_net_now() < t0 + (uint64_t)us * 1000) /* the task's cost */
        ;
    return sum;
}

static int worker(mw *m)
{
    for (;;) {
        bfo_request r, s;
        uint64_t task = 0, out[2];
        bfo_irecv(m->e, &r, &task, sizeof task, 0, m->ctx, TAG_TASK, bfo_net_now());
        wait_req(m, &r);
        if (r.status == BFO_ERR_REVOKED) {
            if (repair(m, NULL))
                return 1;
            continue;
        }
        if (r.status != BFO_OK) {
            fprintf(stderr, "master_worker rank %d: the master is gone (%s)\n", m->me, bfo_errname(r.status));
            return 1;
        }
        if (task == STOP)
            return 0;
        out[0] = task;
        out[1] = work(task, m->task_us);
        bfo_isend(m->e, &s, out, sizeof out, 0, m->ctx, TAG_RESULT, bfo_net_now());
        wait_req(m, &s);
        if (s.status == BFO_ERR_REVOKED && repair(m, NULL))
            return 1;
    }
}

static int master(mw *m, uint64_t ntasks)
{
    uint64_t *sum = calloc(ntasks, sizeof *sum), next = 0, done = 0, total = 0, expect = 0, dups = 0;
    unsigned char *have = calloc(ntasks, 1);
    uint64_t given[BFO_GROUP_MAX], res[BFO_GROUP_MAX][2];
    bfo_request sreq[BFO_GROUP_MAX], rreq[BFO_GROUP_MAX];
    int busy[BFO_GROUP_MAX], lost_total = 0, repairs = 0;
    uint64_t t0 = bfo_net_now();
    if (!sum || !have)
        return 1;
restart:
    /* every worker of the group gets a task; what was out is handed again */
    for (int w = 1; w < grp(m)->n; w++) {
        const int peer = grp(m)->ranks[w];
        busy[w] = 0;
        while (next < ntasks && have[next])
            next++;
        if (next == ntasks)
            break;
        given[w] = next++;
        bfo_isend(m->e, &sreq[w], &given[w], sizeof given[w], peer, m->ctx, TAG_TASK, bfo_net_now());
        bfo_irecv(m->e, &rreq[w], res[w], sizeof res[w], peer, m->ctx, TAG_RESULT, bfo_net_now());
        busy[w] = 1;
    }
    while (done < ntasks) {
        int broken = 0, any = 0;
        step(m);
        for (int w = 1; w < grp(m)->n; w++) {
            if (!busy[w] || !bfo_test(&rreq[w]))
                continue;
            any = 1;
            if (rreq[w].status != BFO_OK) { /* the worker failed, or the group was revoked */
                broken = 1;
                continue;
            }
            wait_req(m, &sreq[w]);
            if (res[w][0] < ntasks && !have[res[w][0]]) {
                have[res[w][0]] = 1;
                sum[res[w][0]] = res[w][1];
                done++;
            } else {
                dups++;
            }
            busy[w] = 0;
            while (next < ntasks && have[next])
                next++;
            if (next == ntasks) { /* the tasks handed out again wrap around */
                next = 0;
                while (next < ntasks && have[next])
                    next++;
            }
            if (next == ntasks)
                continue;
            given[w] = next++;
            bfo_isend(m->e, &sreq[w], &given[w], sizeof given[w], grp(m)->ranks[w], m->ctx, TAG_TASK,
                      bfo_net_now());
            bfo_irecv(m->e, &rreq[w], res[w], sizeof res[w], grp(m)->ranks[w], m->ctx, TAG_RESULT,
                      bfo_net_now());
            busy[w] = 1;
        }
        if (broken || bfo_group_revoked(grp(m))) {
            int lost = 0;
            for (int w = 1; w < grp(m)->n; w++) /* the group's requests end, revoked */
                if (busy[w]) {
                    bfo_revoke(m->e, m->ctx, bfo_net_now());
                    wait_req(m, &rreq[w]);
                    wait_req(m, &sreq[w]);
                }
            if (repair(m, &lost))
                return 1;
            lost_total += lost;
            repairs++;
            next = 0;
            goto restart;
        }
        if (!any && done < ntasks) {
            int idle = 1;
            for (int w = 1; w < grp(m)->n; w++)
                idle &= !busy[w];
            if (idle) /* every task out was done: hand out the rest again */
                goto restart;
        }
    }
    for (int w = 1; w < grp(m)->n; w++) { /* the end */
        uint64_t stop = STOP;
        bfo_request s;
        bfo_isend(m->e, &s, &stop, sizeof stop, grp(m)->ranks[w], m->ctx, TAG_TASK, bfo_net_now());
        wait_req(m, &s);
    }
    for (uint64_t t = 0; t < ntasks; t++) {
        total += sum[t];
        for (uint64_t i = t * 1000; i < t * 1000 + 1000; i++)
            expect += i * i;
    }
    printf("master_worker: %" PRIu64 " tasks on %d workers in %.0f ms; workers lost %d, repairs %d, "
           "results taken twice %" PRIu64 "; total %" PRIu64 " %s\n",
           ntasks, m->size - 1, (double)(bfo_net_now() - t0) / 1e6, lost_total, repairs, dups, total,
           total == expect ? "correct" : "WRONG");
    free(sum);
    free(have);
    return total == expect ? 0 : 1;
}

int main(int argc, char **argv)
{
    static mw m;
    bfo_config cfg;
    uint64_t ntasks = 400;
    int rc, all[BFO_GROUP_MAX], say_ready = 0;
    m.task_us = 3000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tasks") && i + 1 < argc)
            ntasks = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--task-us") && i + 1 < argc)
            m.task_us = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--say-ready"))
            say_ready = 1;
        else {
            fprintf(stderr, "usage: master_worker [--tasks N] [--task-us US] [--say-ready]\n");
            return 2;
        }
    }
    memset(&cfg, 0, sizeof cfg);
    rc = bfo_net_init(&m.net, &cfg, NULL);
    if (rc != BFO_OK) {
        fprintf(stderr, "master_worker: bfo_net_init: %s\n", bfo_net_errname(rc));
        return 1;
    }
    m.e = bfo_net_engine(m.net);
    m.me = bfo_net_rank(m.net);
    m.size = bfo_net_size(m.net);
    m.ctx = 1;
    if (m.size < 2 || m.size > BFO_GROUP_MAX) {
        fprintf(stderr, "master_worker: 2 to %d ranks\n", BFO_GROUP_MAX);
        return 1;
    }
    if (say_ready) /* for a test that kills ranks: this one is past its start */
        fprintf(stderr, "master_worker rank %d: ready\n", m.me);
    for (int i = 0; i < m.size; i++)
        all[i] = i;
    if (bfo_group_init(&m.g[0], m.e, m.ctx, all, m.size, bfo_net_now()) != BFO_OK)
        return 1;
    rc = m.me == 0 ? master(&m, ntasks) : worker(&m);
    bfo_group_fini(grp(&m), bfo_net_now());
    while (!bfo_group_idle(grp(&m)))
        bfo_net_progress(m.net, 1);
    bfo_net_fini(m.net);
    return rc;
}
