// SPDX-License-Identifier: BSD-3-Clause
/* engine_test.h - what the engine's tests (tests/test_engine_<part>.c, one
 * per part of include/fsm/bfo_engine_<part>.h) share: scenarios on the
 * simulated network and their checks, time passing, a mapped-out rail
 * watched, and each program's main (a pattern, --shard).
 *
 * Each test is a scenario (sim/bfo_simrun.h, the runner `bfo sim` uses):
 * messages between ranks, faults to inject, a seed.  It passes when every
 * message arrives exactly once with the right bytes (or, only when no rail
 * is left, fails with the unreachable error), nothing waits past the
 * simulated time limit, every pool entry and memory registration is back,
 * and both ends agree on the rails.  Tests then check what the scenario is
 * about in the engines' statistics.
 */
#ifndef ENGINE_TEST_H
#define ENGINE_TEST_H

#include "bfo_test.h"

#include "bfo_engine.h"
#include "bfo_simrun.h"
#include "bfo_nullnet.h"

/* ------------------------------------------------------------- helpers */

typedef struct msgspec {
    int src, dst;
    size_t size;
} msgspec;

/* A scenario: message i has tag i. */
static inline sr_scenario make(const msgspec *m, int nm, int ranks, int rails, uint64_t seed)
{
    sr_scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.ranks = ranks;
    sc.rails = rails;
    sc.seed = seed;
    sc.nmsgs = nm;
    for (int i = 0; i < nm; i++) {
        sc.msgs[i].src = m[i].src;
        sc.msgs[i].dst = m[i].dst;
        sc.msgs[i].size = m[i].size;
        sc.msgs[i].tag = i;
    }
    return sc;
}

static inline void add_fault(sr_scenario *sc, int what, int type, int rail, uint64_t n, int kind)
{
    sn_fault *f = &sc->faults[sc->nfaults++];
    memset(f, 0, sizeof *f);
    f->what = what;
    f->type = type;
    f->rail = rail;
    f->n = n;
    f->kind = kind;
}

/* Runs a scenario to the end and judges it; the world stays for the test
 * to look at (sr_del it). */
static inline sr_world *run(const sr_scenario *sc)
{
    sr_result res;
    sr_world *w = sr_new(sc);
    sr_go(w);
    if (!sr_judge(w, &res)) {
        for (int i = 0; i < sc->nmsgs; i++)
            if (!bfo_test(&w->sreq[i]) || !bfo_test(&w->rreq[i]))
                print_error("message %d: send in %s, receive in %s\n", i,
                            bfo_send_state_name(w->sreq[i].cs), bfo_recv_state_name(w->rreq[i].cs));
        fail_msg("scenario failed: %s (seed %llu)", res.why, (unsigned long long)sc->seed);
    }
    return w;
}

static inline uint64_t sum_stat(sr_world *w, size_t off)
{
    uint64_t s = 0;
    for (int i = 0; i < w->sc->ranks; i++)
        s += *(const uint64_t *)((const char *)&w->e[i].stats + off);
    return s;
}
#define STAT(w, field) sum_stat(w, offsetof(bfo_stats, field))

/* Every message arrived with BFO_OK (no unreachable error allowed). */
static inline void all_ok(sr_world *w)
{
    for (int i = 0; i < w->sc->nmsgs; i++)
        if (w->sreq[i].status != BFO_OK || w->rreq[i].status != BFO_OK)
            fail_msg("message %d: send %s, receive %s", i, bfo_errname(w->sreq[i].status),
                     bfo_errname(w->rreq[i].status));
}

static const msgspec mixed[] = {
    { 0, 1, 8 },      { 0, 1, 4096 },   { 1, 0, 100 },   { 0, 1, 200000 }, { 1, 0, 70000 },
    { 0, 1, 0 },      { 0, 1, 4097 },   { 1, 0, 1 << 20 }, { 0, 1, 64 },   { 0, 1, 300000 },
};
#define NMIXED ((int)(sizeof mixed / sizeof mixed[0]))

/* The engine gives the peer up here and now, its rails UP as they are: the
 * peer machine told its last rail went, then that the grace ran out. */
static inline void give_up(bfo_engine *e, int peer)
{
    if (e->peers[peer].fsm.cs == BFO_PEER_ST_REACHABLE)
        bfo__peer_step(e, peer, BFO_PEER_EV_LAST_RAIL_LOST);
    bfo__peer_step(e, peer, BFO_PEER_EV_GRACE_EXPIRED);
    assert_int_equal(e->peers[peer].fsm.cs, BFO_PEER_ST_UNREACHABLE);
}

/* ------------------------------------------- failure detection: helpers */

#define MS 1000000ull

/* Simulated time passes with timers checked at least every millisecond
 * (the runner's idle step is 5 ms): detection times are measured to 1 ms. */
static inline void pass_time(sr_world *w, uint64_t ns)
{
    for (uint64_t end = w->sn.now + ns; w->sn.now < end;) {
        if (!sn_step(&w->sn))
            w->sn.now = w->sn.now + MS < end ? w->sn.now + MS : end;
        for (int i = 0; i < w->sc->ranks; i++)
            bfo_engine_progress(&w->e[i], w->sn.now);
    }
}

/* When each rank first mapped each (peer, rail) out (UP -> FAILED), and by
 * which event; mapouts counts them all. */
typedef struct mapout_watch {
    sr_world *w;
    int rank;
    uint64_t at[SN_TEST_RANKS][BFO_MAX_RAILS];
    int ev[SN_TEST_RANKS][BFO_MAX_RAILS];
    int mapouts;
    bfo_tracer tracer;
} mapout_watch;

static inline void on_rail_step(void *user, const bfo_machine *m, const bfo_step *st)
{
    mapout_watch *x = (mapout_watch *)user;
    if (m != &bfo_rail_machine || st->result != BFO_OK ||
        (st->from != BFO_RAIL_ST_UP && st->from != BFO_RAIL_ST_DEMOTED) || st->to != BFO_RAIL_ST_FAILED)
        return;
    x->mapouts++;
    for (int p = 0; p < x->w->sc->ranks; p++)
        for (int k = 0; k < x->w->sc->rails; k++)
            if (st->obj == &x->w->e[x->rank].peers[p].rail[k] && !x->at[p][k]) {
                x->at[p][k] = x->w->e[x->rank].now;
                x->ev[p][k] = st->event;
            }
}

static inline void watch_mapouts(sr_world *w, mapout_watch *x)
{
    for (int i = 0; i < w->sc->ranks; i++) {
        memset(&x[i], 0, sizeof x[i]);
        x[i].w = w;
        x[i].rank = i;
        x[i].tracer.fn = on_rail_step;
        x[i].tracer.user = &x[i];
        w->e[i].trace = &x[i].tracer;
    }
}

static inline int rail_up(sr_world *w, int rank, int peer, int rail)
{
    return w->e[rank].peers[peer].rail[rail].fsm.cs == BFO_RAIL_ST_UP;
}

/* Both directions of a rail between ranks a and b. */
static inline void rail_path(sr_world *w, int a, int b, int rail, int mode)
{
    sn_set_path(&w->sn, a, b, rail, mode);
    sn_set_path(&w->sn, b, a, rail, mode);
}

/* A stream of small (eager) messages posted as time goes by, each checked
 * at the end: delivered once, its bytes, source and tag. */
#define STREAM_MAX 1024
#define STREAM_LEN 200
typedef struct stream {
    sr_world *w;
    int n;
    int src[STREAM_MAX], dst[STREAM_MAX];
    bfo_request s[STREAM_MAX], r[STREAM_MAX];
    uint8_t out[STREAM_MAX][STREAM_LEN], in[STREAM_MAX][STREAM_LEN];
} stream;

/* A world of 2 ranks and 2 rails with these timers (NULL: the defaults),
 * rails up. */
static inline sr_world *detect_world_cfg(uint64_t seed, int transport_heard, mapout_watch *x,
                                  const bfo_config *cfg)
{
    static const bfo_config defaults; /* zero: every default */
    sr_scenario sc = make(NULL, 0, 2, 2, seed);
    sc.cfg = cfg ? cfg : &defaults;
    sc.connect_at_init = 1; /* about rails UP from the start */
    sr_world *w = sr_new(&sc);
    w->sn.transport_heard = transport_heard;
    if (!cfg) {
        assert_int_equal(w->e[0].cfg.heartbeat_ns, 100 * MS);
        assert_int_equal(w->e[0].cfg.probe_timeout_ns, 40 * MS);
        assert_int_equal(w->e[0].cfg.silence_ns, 1000 * MS);
    }
    watch_mapouts(w, x);
    pass_time(w, 5 * MS);
    for (int k = 0; k < 2; k++)
        assert_true(rail_up(w, 0, 1, k) && rail_up(w, 1, 0, k));
    return w;
}

/* ------------------------------------------------ pools that grow (issue 16) */

typedef struct grow_log {
    size_t bytes;
    int calls;
    void *blocks[8192];
} grow_log;

static inline void *test_grow(void *ctx, size_t bytes)
{
    grow_log *g = (grow_log *)ctx;
    void *m;
    if (g->calls == (int)(sizeof g->blocks / sizeof g->blocks[0]))
        return NULL;
    m = aligned_alloc(16, (bytes + 15) & ~(size_t)15);
    g->blocks[g->calls++] = m;
    g->bytes += bytes;
    return m;
}

static inline void grow_free(grow_log *g)
{
    for (int i = 0; i < g->calls; i++)
        free(g->blocks[i]);
}

/* ------------------------------------------------------------- leaving
 *
 * bfo_engine_leave, the BYE and the rail's LEFT state: each test is named
 * after the transition (or the C rule) it shows. */

static int parts[SN_TEST_RANKS][SN_TEST_RANKS][BFO_MAX_RAILS]; /* bfo_backend.part calls */
static inline void count_part(void *ctx, int peer, int rail) { parts[((sn_endpoint *)ctx)->rank][peer][rail]++; }
static inline void attach_part(sr_world *w, void *arg)
{
    (void)arg;
    memset(parts, 0, sizeof parts);
    for (int i = 0; i < w->sn.n; i++)
        w->sn.be[i].part = count_part;
}

/* ranks and rails, every rail up; part counted */
static inline sr_world *leave_world(int ranks, int rails, uint64_t seed)
{
    sr_scenario sc = make(NULL, 0, ranks, rails, seed);
    sc.attach = attach_part;
    sc.connect_at_init = 1; /* about leaving over rails UP */
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    for (int i = 0; i < ranks; i++)
        for (int p = 0; p < ranks; p++)
            for (int k = 0; p != i && k < rails; k++)
                assert_int_equal(w->e[i].peers[p].rail[k].fsm.cs, BFO_RAIL_ST_UP);
    return w;
}

/* The network moves until done(), at most n steps. */
#define STEP_UNTIL(w, cond)                                          \
    do {                                                             \
        for (int k_ = 0; k_ < 20000 && !(cond); k_++)                \
            if (!sn_step(&(w)->sn))                                  \
                sr_advance((w), 1000000);                            \
    } while (0)

/* Rank r leaves; once its BYEs are out its process ends. */
static inline void leave_and_exit(sr_world *w, int r)
{
    assert_int_equal(bfo_engine_leave(&w->e[r], w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_engine_left(&w->e[r]));
    assert_true(bfo_engine_left(&w->e[r]));
    sn_rank_exits(&w->sn, r);
}

/* test_engine_<part> [PATTERN] [--shard K/N]: only the tests that match PATTERN
 * (e.g. "*four_rails*"); of those, with --shard, the K-th of every N in
 * the table's order (K from 0): check-valgrind runs the longest
 * program's shards side by side (tests/valgrind.sh). */
static inline int engine_test_main(int argc, char **argv, const char *group,
                                   const struct CMUnitTest *tests, size_t ntests)
{
    unsigned shard = 0, nshards = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shard") && i + 1 < argc) {
            if (sscanf(argv[++i], "%u/%u", &shard, &nshards) != 2 || nshards == 0 || shard >= nshards) {
                fprintf(stderr, "%s: --shard K/N, 0 <= K < N\n", argv[0]);
                return 2;
            }
        } else {
            cmocka_set_test_filter(argv[i]);
        }
    }
    struct CMUnitTest *mine = (struct CMUnitTest *)malloc(ntests * sizeof *mine);
    size_t n = 0;
    if (!mine)
        abort();
    for (size_t i = 0; i < ntests; i++)
        if (i % nshards == shard)
            mine[n++] = tests[i];
    int rc = _cmocka_run_group_tests(group, mine, n, NULL, NULL);
    free(mine);
    return rc;
}

/* n messages from rank 0 to rank 1 sent with no receive posted (the
 * receives come later, or never): the pattern in st->out, st->n = n. */
static inline void stream_send_only(stream *st, int n)
{
    sr_world *w = st->w;
    assert_true(n <= STREAM_MAX);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < STREAM_LEN; k++)
            st->out[i][k] = sr_pattern(i, (size_t)k);
        st->src[i] = 0;
        st->dst[i] = 1;
        assert_int_equal(bfo_isend(&w->e[0], &st->s[i], st->out[i], STREAM_LEN, 1, 1, i, w->sn.now), BFO_OK);
    }
    st->n = n;
}

#endif /* ENGINE_TEST_H */
