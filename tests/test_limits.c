// SPDX-License-Identifier: BSD-3-Clause
/* test_limits.c - the limits checked at bfo_net init (bfo_limits.h): what
 * the transports' rows say they hold, summed for a job; the decision (need
 * against soft and hard: nothing, raise, short) as a table; and the check
 * over a fake getrlimit/setrlimit: what it sets, what it says, what it
 * returns in each mode. */
#define _GNU_SOURCE /* fmemopen */
#include "bfo_test.h"
#include "bfo_limits.h"
#include "bfo_net.h"

#include <errno.h>
#include <sys/resource.h>

/* ------------------------------------------------------ the fake system */

static struct {
    uint64_t soft[2], hard[2]; /* [0] NOFILE, [1] MEMLOCK */
    int gets, sets, cap;
    uint64_t set_soft[2], set_hard[2];
    int set_fails;
} S;

static int ix(int resource) { return resource == RLIMIT_MEMLOCK; }

static int fake_get(int resource, uint64_t *soft, uint64_t *hard)
{
    S.gets++;
    *soft = S.soft[ix(resource)];
    *hard = S.hard[ix(resource)];
    return 0;
}

static int fake_set(int resource, uint64_t soft, uint64_t hard)
{
    S.sets++;
    if (S.set_fails) {
        errno = EPERM;
        return -1;
    }
    S.set_soft[ix(resource)] = soft;
    S.set_hard[ix(resource)] = hard;
    S.soft[ix(resource)] = soft;
    S.hard[ix(resource)] = hard;
    return 0;
}

static int fake_cap(void) { return S.cap; }

static const bfo_limits_sys FAKE = { fake_get, fake_set, fake_cap };

static void fake(uint64_t soft, uint64_t hard, uint64_t msoft, uint64_t mhard)
{
    memset(&S, 0, sizeof S);
    S.soft[0] = soft;
    S.hard[0] = hard;
    S.soft[1] = msoft;
    S.hard[1] = mhard;
}

/* The check run, what it said in out (cap bytes). */
static int check(const bfo_limits_part *p, int n, uint64_t open_now, int mode, char *out, size_t cap)
{
    FILE *f;
    int rc;
    memset(out, 0, cap);
    f = fmemopen(out, cap, "w");
    assert_non_null(f);
    rc = bfo_limits_check(p, n, open_now, mode, &FAKE, 3, 1, f);
    fclose(f);
    return rc;
}

/* A part from a real row: what the transport says for size ranks on nrails. */
static bfo_limits_part row(const bfo_transport_ops *ops, const void *opt, int size, int nrails)
{
    bfo_limits_part p;
    bfo_transport_args a;
    bfo_config cfg;
    memset(&p, 0, sizeof p);
    memset(&a, 0, sizeof a);
    memset(&cfg, 0, sizeof cfg);
    bfo_config_defaults(&cfg);
    a.size = size;
    a.nrails = nrails;
    a.cfg = &cfg;
    a.opt = opt;
    p.name = ops->name;
    p.nrails = nrails;
    p.peers = (uint64_t)size - 1;
    assert_non_null(ops->need);
    ops->need(&a, &p.need);
    return p;
}

/* ---------------------------------------------------------- the need */

/* The case: 1,024 ranks on 2 TCP rails hold 2 x 1,023 connections,
 * a listener and a beacon socket per rail, an epoll set: over 1,024. */
static void test_tcp_need_is_a_socket_per_peer_per_rail_plus_its_listeners(void **state)
{
    bfo_tcp_options o;
    char why[512];
    bfo_limits_part p = row(&bfo_tcp_transport, NULL, 1024, 2);
    (void)state;
    assert_int_equal(bfo_limits_fds(&p, 1, 10, why, sizeof why), 1023 * 2 + 2 * 2 + 1 + 10 + BFO_LIMITS_SPARE_FDS);
    assert_string_equal(why, "tcp: 1,023 peers x 2 rails x 1 + 2 rails x 2 + 1; 10 open now; 32 spare");
    assert_int_equal(bfo_limits_locked(&p, 1, why, sizeof why), 0); /* TCP pins nothing */
    assert_string_equal(why, "");
    memset(&o, 0, sizeof o);
    o.beacon_interval_ns = -1; /* no beacons: no UDP socket */
    p = row(&bfo_tcp_transport, &o, 1024, 2);
    assert_int_equal(bfo_limits_fds(&p, 1, 0, why, sizeof why), 1023 * 2 + 2 + 1 + BFO_LIMITS_SPARE_FDS);
}

/* shm reaches the ranks on its host only: bfo_net gives it those as peers. */
static void test_shm_and_tcp_sum_with_shm_counting_its_host(void **state)
{
    bfo_limits_part p[2];
    char why[512];
    (void)state;
    p[0] = row(&bfo_shm_transport, NULL, 64, 1);
    assert_int_equal(p[0].need.host_only, 1);
    p[0].peers = 15; /* 16 ranks a host */
    p[1] = row(&bfo_tcp_transport, NULL, 64, 2);
    assert_int_equal(p[1].need.host_only, 0);
    assert_int_equal(bfo_limits_fds(p, 2, 5, why, sizeof why),
                     (15 * 3 + 1 + 2) + (63 * 2 + 2 * 2 + 1) + 5 + BFO_LIMITS_SPARE_FDS);
    assert_string_equal(why, "shm: 15 peers x 1 rail x 3 + 1 rail x 1 + 2; tcp: 63 peers x 2 rails x 1 + 2 rails x 2 "
                             "+ 1; 5 open now; 32 spare");
}

#ifdef BFO_HAVE_VERBS
/* The figure: without the shared receive queue a verbs rail pins
 * (32 + 32) frames per peer, about 4 MiB with the default sizes, so
 * Debian's 8 MiB holds two peers; with it (the default), 64 + 32 frames
 * per rail and nothing per peer; no descriptor per peer without the TCP
 * exchange. */
static void test_verbs_need_pins_its_buffers_per_peer_per_rail(void **state)
{
    bfo_verbs_options o;
    char why[512];
    bfo_limits_part p = row(&bfo_verbs_transport, NULL, 16, 2);
    uint64_t locked;
    (void)state;
    assert_int_equal(p.need.locked_peer, 0);
    assert_true(p.need.locked_rail >= 96u * 65536 && p.need.locked_rail < 97u * 70000);
    memset(&o, 0, sizeof o);
    o.srq = -1;
    p = row(&bfo_verbs_transport, &o, 16, 2);
    assert_true(p.need.locked_peer >= 64u * 65536 && p.need.locked_peer < 64u * 70000);
    assert_true(p.need.locked_rail > 0);
    assert_int_equal(p.need.fds_peer, 0);
    locked = bfo_limits_locked(&p, 1, why, sizeof why);
    assert_true(locked >= 15 * 2 * p.need.locked_peer);
    assert_non_null(strstr(why, "verbs: 15 peers x 2 rails"));
    memset(&o, 0, sizeof o);
    o.recv_depth = 8;
    o.send_depth = 8;
    o.srq = -1;
    o.tcp_exchange = 1;
    p = row(&bfo_verbs_transport, &o, 16, 2);
    assert_true(p.need.locked_peer >= 16u * 65536 && p.need.locked_peer < 16u * 70000);
    assert_int_equal(p.need.fds_peer, 1);
}
#endif

/* Locked bytes per peer per rail, per rail, once; an absurd row saturates
 * rather than wrapping to a small need. */
static void test_locked_need_sums_and_saturates(void **state)
{
    bfo_limits_part p;
    char why[512];
    (void)state;
    memset(&p, 0, sizeof p);
    p.name = "rdma";
    p.nrails = 2;
    p.peers = 1023;
    p.need.locked_peer = 4u << 20;
    p.need.locked_rail = 1u << 20;
    p.need.locked = 4096;
    assert_int_equal(bfo_limits_locked(&p, 1, why, sizeof why), 1023ull * 2 * (4u << 20) + 2 * (1u << 20) + 4096);
    assert_string_equal(why, "rdma: 1,023 peers x 2 rails x 4,194,304 bytes + 2 rails x 1,048,576 bytes + 4,096 bytes");
    p.need.locked_peer = UINT64_MAX / 2;
    assert_true(bfo_limits_locked(&p, 1, NULL, 0) == UINT64_MAX);
}

/* ------------------------------------------------------ the decision */

static void test_decision_as_a_table(void **state)
{
    static const struct {
        uint64_t need, soft, hard;
        bfo_limit_verdict want;
    } t[] = {
        { 100, 1024, 4096, BFO_LIMIT_OK },
        { 1024, 1024, 1024, BFO_LIMIT_OK },                  /* exactly enough */
        { 1025, 1024, 1024, BFO_LIMIT_SHORT },
        { 2100, 1024, 4096, BFO_LIMIT_RAISE },
        { 4096, 1024, 4096, BFO_LIMIT_RAISE },
        { 4097, 1024, 4096, BFO_LIMIT_SHORT },
        { 2100, 1024, BFO_LIMIT_NONE, BFO_LIMIT_RAISE },
        { 2100, BFO_LIMIT_NONE, BFO_LIMIT_NONE, BFO_LIMIT_OK }, /* unlimited */
        { UINT64_MAX - 1, BFO_LIMIT_NONE, BFO_LIMIT_NONE, BFO_LIMIT_OK },
        { 9u << 20, 8u << 20, 8u << 20, BFO_LIMIT_SHORT },      /* Debian's memlock */
    };
    (void)state;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (bfo_limit_decide(t[i].need, t[i].soft, t[i].hard) != t[i].want)
            fail_msg("need %llu soft %llu hard %llu: %d, want %d", (unsigned long long)t[i].need,
                     (unsigned long long)t[i].soft, (unsigned long long)t[i].hard,
                     bfo_limit_decide(t[i].need, t[i].soft, t[i].hard), t[i].want);
}

static void test_mode_names(void **state)
{
    (void)state;
    assert_int_equal(bfo_limits_mode("fail"), BFO_LIMITS_FAIL);
    assert_int_equal(bfo_limits_mode("warn"), BFO_LIMITS_WARN);
    assert_int_equal(bfo_limits_mode("off"), BFO_LIMITS_OFF);
    assert_int_equal(bfo_limits_mode("Off"), 0);
    assert_int_equal(bfo_limits_mode(""), 0);
    assert_int_equal(bfo_limits_mode(NULL), 0);
    assert_int_equal(BFO_NET_LIMITS_FAIL, BFO_LIMITS_FAIL);
    assert_int_equal(BFO_NET_LIMITS_WARN, BFO_LIMITS_WARN);
    assert_int_equal(BFO_NET_LIMITS_OFF, BFO_LIMITS_OFF);
}

/* --------------------------------------- the check over the fake system */

/* soft 1,024, hard 4,096, need 2,089: the soft limit raised to the need
 * (not to the hard limit), the hard limit untouched, said once. */
static void test_soft_limit_raised_to_the_need_where_the_hard_allows(void **state)
{
    bfo_limits_part p = row(&bfo_tcp_transport, NULL, 1024, 2);
    char out[2048];
    (void)state;
    fake(1024, 4096, BFO_LIMIT_NONE, BFO_LIMIT_NONE);
    assert_int_equal(check(&p, 1, 38, BFO_LIMITS_FAIL, out, sizeof out), BFO_OK);
    assert_int_equal(S.sets, 1);
    assert_int_equal(S.set_soft[0], 1023 * 2 + 5 + 38 + 32);
    assert_int_equal(S.set_hard[0], 4096);
    assert_non_null(strstr(out, "bfo: rank 3: open files: soft limit raised from 1,024 to 2,121 (hard 4,096)"));
    assert_null(strstr(out, "locked memory")); /* TCP pins nothing: not looked at */
}

/* soft = hard = 1,024 and need 2,121: nothing set, one message naming the
 * limit, the need, how it was counted and what to set; BFO_ERR_INVALID. */
static void test_short_hard_limit_fails_with_the_value_to_set(void **state)
{
    bfo_limits_part p = row(&bfo_tcp_transport, NULL, 1024, 2);
    char out[2048];
    (void)state;
    fake(1024, 1024, BFO_LIMIT_NONE, BFO_LIMIT_NONE);
    assert_int_equal(check(&p, 1, 38, BFO_LIMITS_FAIL, out, sizeof out), BFO_ERR_INVALID);
    assert_int_equal(S.sets, 0); /* the hard limit is the administrator's */
    assert_non_null(strstr(out, "bfo: rank 3: open files: this job may hold up to 2,121 (tcp: 1,023 peers x 2 rails x "
                                "1 + 2 rails x 2 + 1; 38 open now; 32 spare; an upper bound"));
    assert_non_null(strstr(out, "the limit is 1,024 (hard 1,024)"));
    assert_non_null(strstr(out, "ulimit -n 2121"));
    assert_non_null(strstr(out, "LimitNOFILE=2121"));
    assert_non_null(strstr(out, "fewer rails"));
    assert_non_null(strstr(out, "BFO_LIMITS=warn"));
}

/* warn: the same message, the soft limit raised as far as the hard one
 * goes, and init goes on. */
static void test_warn_says_it_raises_what_it_can_and_goes_on(void **state)
{
    bfo_limits_part p = row(&bfo_tcp_transport, NULL, 1024, 2);
    char out[2048];
    (void)state;
    fake(512, 1024, BFO_LIMIT_NONE, BFO_LIMIT_NONE);
    assert_int_equal(check(&p, 1, 38, BFO_LIMITS_WARN, out, sizeof out), BFO_OK);
    assert_int_equal(S.set_soft[0], 1024);
    assert_int_equal(S.set_hard[0], 1024);
    assert_non_null(strstr(out, "open files: this job may hold up to 2,121"));
    assert_non_null(strstr(out, "going on (BFO_LIMITS=warn)"));
}

/* off: nothing read, nothing set, nothing said. */
static void test_off_looks_at_nothing(void **state)
{
    bfo_limits_part p = row(&bfo_tcp_transport, NULL, 1024, 2);
    char out[256] = "";
    (void)state;
    fake(64, 64, 0, 0);
    assert_int_equal(check(&p, 1, 38, BFO_LIMITS_OFF, out, sizeof out), BFO_OK);
    assert_int_equal(S.gets + S.sets, 0);
    assert_string_equal(out, "");
}

/* A layer that silences bfo (log -1: pml/bfo at verbose 0) hears of no
 * raise, and still of a short limit: init fails for it. */
static void test_silenced_caller_still_hears_a_short_limit(void **state)
{
    bfo_limits_part p = row(&bfo_tcp_transport, NULL, 1024, 2);
    char out[2048];
    FILE *f;
    (void)state;
    fake(1024, 4096, BFO_LIMIT_NONE, BFO_LIMIT_NONE);
    memset(out, 0, sizeof out);
    f = fmemopen(out, sizeof out, "w");
    assert_int_equal(bfo_limits_check(&p, 1, 38, BFO_LIMITS_FAIL, &FAKE, 3, -1, f), BFO_OK);
    fclose(f);
    assert_int_equal(S.sets, 1);
    assert_string_equal(out, "");
    fake(1024, 1024, BFO_LIMIT_NONE, BFO_LIMIT_NONE);
    f = fmemopen(out, sizeof out, "w");
    assert_int_equal(bfo_limits_check(&p, 1, 38, BFO_LIMITS_FAIL, &FAKE, 3, -1, f), BFO_ERR_INVALID);
    fclose(f);
    assert_non_null(strstr(out, "open files: this job may hold up to 2,121"));
}

/* A raise the system refuses (setrlimit fails) is said and counts as short. */
static void test_a_refused_raise_is_short(void **state)
{
    bfo_limits_part p = row(&bfo_tcp_transport, NULL, 1024, 2);
    char out[2048];
    (void)state;
    fake(1024, 4096, BFO_LIMIT_NONE, BFO_LIMIT_NONE);
    S.set_fails = 1;
    assert_int_equal(check(&p, 1, 38, BFO_LIMITS_FAIL, out, sizeof out), BFO_ERR_INVALID);
    assert_non_null(strstr(out, "raising the soft limit from 1,024 to 2,121 failed"));
}

/* Locked memory: checked only when a transport pins, said in bytes with
 * ulimit -l in KiB; not with CAP_IPC_LOCK (the kernel does not apply it). */
static void test_locked_memory_short_unless_cap_ipc_lock(void **state)
{
    bfo_limits_part p;
    char out[2048];
    (void)state;
    memset(&p, 0, sizeof p);
    p.name = "rdma";
    p.nrails = 1;
    p.peers = 3;
    p.need.locked_peer = 4u << 20; /* 12 MiB against Debian's 8 MiB */
    fake(1024, 1024, 8u << 20, 8u << 20);
    assert_int_equal(check(&p, 1, 0, BFO_LIMITS_FAIL, out, sizeof out), BFO_ERR_INVALID);
    assert_non_null(strstr(out, "locked memory: this job may pin up to 12,582,912 bytes (rdma: 3 peers x 1 rail x "
                                "4,194,304 bytes; an upper bound"));
    assert_non_null(strstr(out, "the limit is 8,388,608 (hard 8,388,608)"));
    assert_non_null(strstr(out, "ulimit -l 12288 (KiB)"));
    assert_non_null(strstr(out, "LimitMEMLOCK=12582912"));
    assert_null(strstr(out, "open files")); /* 32 spare: within 1,024 */
    fake(1024, 1024, 8u << 20, BFO_LIMIT_NONE); /* raised, to the need */
    assert_int_equal(check(&p, 1, 0, BFO_LIMITS_FAIL, out, sizeof out), BFO_OK);
    assert_int_equal(S.set_soft[1], 12u << 20);
    assert_true(S.set_hard[1] == BFO_LIMIT_NONE);
    fake(1024, 1024, 8u << 20, 8u << 20);
    S.cap = 1;
    assert_int_equal(check(&p, 1, 0, BFO_LIMITS_FAIL, out, sizeof out), BFO_OK);
    assert_int_equal(S.gets, 1); /* NOFILE only */
}

/* The real system: the descriptors open now are counted (stdio at least). */
static void test_open_fds_counted(void **state)
{
    uint64_t before = bfo_limits_open_fds();
    FILE *f = tmpfile();
    (void)state;
    assert_true(before >= 3);
    assert_non_null(f);
    assert_int_equal(bfo_limits_open_fds(), before + 1);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tcp_need_is_a_socket_per_peer_per_rail_plus_its_listeners),
        cmocka_unit_test(test_shm_and_tcp_sum_with_shm_counting_its_host),
#ifdef BFO_HAVE_VERBS
        cmocka_unit_test(test_verbs_need_pins_its_buffers_per_peer_per_rail),
#endif
        cmocka_unit_test(test_locked_need_sums_and_saturates),
        cmocka_unit_test(test_decision_as_a_table),
        cmocka_unit_test(test_mode_names),
        cmocka_unit_test(test_soft_limit_raised_to_the_need_where_the_hard_allows),
        cmocka_unit_test(test_short_hard_limit_fails_with_the_value_to_set),
        cmocka_unit_test(test_warn_says_it_raises_what_it_can_and_goes_on),
        cmocka_unit_test(test_off_looks_at_nothing),
        cmocka_unit_test(test_silenced_caller_still_hears_a_short_limit),
        cmocka_unit_test(test_a_refused_raise_is_short),
        cmocka_unit_test(test_locked_memory_short_unless_cap_ipc_lock),
        cmocka_unit_test(test_open_fds_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
