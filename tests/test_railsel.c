// SPDX-License-Identifier: BSD-3-Clause
/* test_railsel.c - one rail value for a whole job (bfo_railsel.h): hosts
 * made up as interface tables, each rank's pick, the exchange of what each
 * found, and the rail list every rank then hands bfo_net.  The hosts are
 * tests/hosts' (4 hosts, a management network and two rail networks), and
 * the cases those tests run across namespaces are here as data first. */
#include "bfo_test.h"
#include "bfo_railsel.h"
#include "bfo_net.h"

#include <arpa/inet.h>

#define UPR (BFO_RAILSEL_UP | BFO_RAILSEL_RUNNING)

/* One address of one interface: "eth1 10.36.1.11/24" (flags, driver). */
static bfo_railsel_if ifa(const char *name, const char *cidr, unsigned flags, const char *driver)
{
    bfo_railsel_if i;
    char a[64];
    const char *slash = strchr(cidr, '/');
    memset(&i, 0, sizeof i);
    snprintf(i.name, sizeof i.name, "%s", name);
    snprintf(i.driver, sizeof i.driver, "%s", driver ? driver : "veth");
    snprintf(a, sizeof a, "%.*s", (int)(slash - cidr), cidr);
    i.prefix = atoi(slash + 1);
    if (inet_pton(AF_INET, a, i.addr) == 1)
        i.family = 4;
    else {
        assert_int_equal(inet_pton(AF_INET6, a, i.addr), 1);
        i.family = 6;
    }
    i.flags = flags;
    return i;
}

/* Host h (1..4) as tests/hosts builds it: lo, eth0 on the management
 * network 10.36.0.0/24, eth1 and eth2 on the rail networks (v4 and v6);
 * swapped: eth1 on the second rail network and eth2 on the first;
 * one_rail: no eth2. */
typedef struct host {
    bfo_railsel_if i[16];
    int n;
} host;

static host make_host(int h, int swapped, int one_rail)
{
    host x;
    char c[64];
    int r1 = swapped ? 2 : 1, r2 = swapped ? 1 : 2;
    memset(&x, 0, sizeof x);
    x.i[x.n++] = ifa("lo", "127.0.0.1/8", UPR | BFO_RAILSEL_LOOPBACK, "");
    x.i[x.n++] = ifa("lo", "::1/128", UPR | BFO_RAILSEL_LOOPBACK, "");
    snprintf(c, sizeof c, "10.36.0.%d/24", 10 + h);
    x.i[x.n++] = ifa("eth0", c, UPR, NULL);
    snprintf(c, sizeof c, "10.36.%d.%d/24", r1, 10 + h);
    x.i[x.n++] = ifa("eth1", c, UPR, NULL);
    snprintf(c, sizeof c, "fd36:%d::%d/64", r1, 10 + h);
    x.i[x.n++] = ifa("eth1", c, UPR, NULL);
    x.i[x.n++] = ifa("eth1", "fe80::1/64", UPR, NULL); /* link-local: never a rail */
    if (!one_rail) {
        snprintf(c, sizeof c, "10.36.%d.%d/24", r2, 10 + h);
        x.i[x.n++] = ifa("eth2", c, UPR, NULL);
        snprintf(c, sizeof c, "fd36:%d::%d/64", r2, 10 + h);
        x.i[x.n++] = ifa("eth2", c, UPR, NULL);
    }
    return x;
}

/* The job: ranks on hosts (rank r on host hosts[r]), each picking value;
 * the exchange when the value needs it; each rank's list into lists[r].
 * BFO_OK, or the first failure (err into err). */
#define NR 4
static int job(const char *value, host *const *hosts, int n, char lists[][256], char *err, size_t errcap)
{
    static bfo_railsel s[NR];
    char nets[NR][512];
    const char *np[NR];
    for (int r = 0; r < n; r++) {
        (void)bfo_railsel_pick(&s[r], value, hosts[r]->i, hosts[r]->n);
        assert_true(bfo_railsel_nets(&s[r], nets[r], sizeof nets[r]) > 0);
        np[r] = nets[r];
    }
    for (int r = 0; r < n; r++) {
        int rc = s[r].err[0] ? BFO_ERR_INVALID : s[r].exchange ? bfo_railsel_merge(&s[r], np, n) : bfo_railsel_local(&s[r]);
        if (rc != BFO_OK) {
            snprintf(err, errcap, "rank %d: %s", r, s[r].err);
            return rc;
        }
        assert_true(bfo_railsel_list(&s[r], lists[r], sizeof lists[r]) > 0);
        assert_int_equal(bfo_net_check_rails(lists[r]), s[r].nslots); /* bfo_net takes it */
    }
    return BFO_OK;
}

/* value on four hosts (host 3 swapped, host 4 one-rail, as asked): each
 * rank's list as expected ("" for a case that must fail, err containing
 * want[0]'s text after "!"). */
typedef struct job_case {
    const char *name, *value;
    int swapped3, one_rail4;
    const char *want[NR];
} job_case;

static const job_case job_cases[] = {
    { "cidrs_pair_by_network_on_every_host", "10.36.1.0/24,10.36.2.0/24", 1, 1,
      { "10.36.1.11,10.36.2.11", "10.36.1.12,10.36.2.12", "10.36.1.13,10.36.2.13", "10.36.1.14,-" } },
    { "ipv6_cidrs_pick_each_hosts_global_address", "fd36:1::/64,fd36:2::/64", 1, 1,
      { "tcp:[fd36:1::11],tcp:[fd36:2::11]", "tcp:[fd36:1::12],tcp:[fd36:2::12]", "tcp:[fd36:1::13],tcp:[fd36:2::13]",
        "tcp:[fd36:1::14],-" } },
    { "shm_and_cidrs_keep_the_values_order", "shm,10.36.2.0/24,10.36.1.0/24", 0, 0,
      { "shm,10.36.2.11,10.36.1.11", "shm,10.36.2.12,10.36.1.12", "shm,10.36.2.13,10.36.1.13",
        "shm,10.36.2.14,10.36.1.14" } },
    { "interface_names_pair_by_the_network_they_are_on", "eth1,?eth2", 1, 1,
      { "10.36.1.11,10.36.2.11", "10.36.1.12,10.36.2.12", "10.36.1.13,10.36.2.13", "10.36.1.14,-" } },
    { "a_named_interface_missing_on_a_host_fails_there", "eth1,eth2", 0, 1,
      { "!rank 3 could not pick its rails: interface eth2: not on this host (?eth2 takes it only where present)" } },
    { "default_takes_every_network_but_loopback", NULL, 1, 1,
      { "shm,10.36.0.11,10.36.1.11,10.36.2.11", "shm,10.36.0.12,10.36.1.12,10.36.2.12",
        "shm,10.36.0.13,10.36.1.13,10.36.2.13", "shm,10.36.0.14,10.36.1.14,-" } },
    { "exclude_list_is_the_default_without_the_management_network", "^eth0", 1, 1,
      { "shm,10.36.1.11,10.36.2.11", "shm,10.36.1.12,10.36.2.12", "shm,10.36.1.13,10.36.2.13", "shm,10.36.1.14,-" } },
    { "exclude_list_by_cidr_and_shm", "^shm,10.36.0.0/24", 0, 0,
      { "10.36.1.11,10.36.2.11", "10.36.1.12,10.36.2.12", "10.36.1.13,10.36.2.13", "10.36.1.14,10.36.2.14" } },
    { "network_group_is_one_rail_whatever_the_subnet", "fab=10.36.2.0/24+10.36.1.0/24", 0, 1,
      { "10.36.2.11", "10.36.2.12", "10.36.2.13", "10.36.1.14" } },
    { "a_network_no_host_has_is_a_rail_none_has", "10.36.1.0/24,10.99.0.0/16", 0, 0,
      { "10.36.1.11,-", "10.36.1.12,-", "10.36.1.13,-", "10.36.1.14,-" } },
    { "no_rail_on_a_host_is_an_error_there", "10.99.0.0/16", 0, 0,
      { "!rank 0: none of the job's 1 rail(s) is on this host" } },
};

static void run_job_case(void **state)
{
    const job_case *c = (const job_case *)*state;
    host h[NR];
    host *hp[NR];
    char lists[NR][256], err[512] = "";
    int rc;
    for (int r = 0; r < NR; r++) {
        h[r] = make_host(r + 1, r == 2 && c->swapped3, r == 3 && c->one_rail4);
        hp[r] = &h[r];
    }
    rc = job(c->value, hp, NR, lists, err, sizeof err);
    if (c->want[0][0] == '!') {
        if (rc == BFO_OK || !strstr(err, c->want[0] + 1))
            fail_msg("%s: wanted the error \"%s\", got rc %d \"%s\"", c->name, c->want[0] + 1, rc, err);
        return;
    }
    if (rc != BFO_OK)
        fail_msg("%s: %s", c->name, err);
    for (int r = 0; r < NR; r++)
        if (strcmp(lists[r], c->want[r]))
            fail_msg("%s: rank %d (host %d) has \"%s\", want \"%s\"", c->name, r, r + 1, lists[r], c->want[r]);
}

/* The default leaves out what is not a rail, and says why. */
static void test_default_skips_loopback_bridges_virtual_and_down_and_says_why(void **state)
{
    bfo_railsel s;
    bfo_railsel_if i[] = {
        ifa("lo", "127.0.0.1/8", UPR | BFO_RAILSEL_LOOPBACK, ""),
        ifa("docker0", "172.17.0.1/16", UPR | BFO_RAILSEL_BRIDGE, "bridge"),
        ifa("virbr0", "192.168.122.1/24", BFO_RAILSEL_UP, "bridge"),
        ifa("br-3f2a", "172.18.0.1/16", UPR, "bridge"),
        ifa("vethab12", "169.254.3.1/16", UPR, "veth"),
        ifa("eno1", "192.168.1.5/24", UPR, "igb"),
        ifa("eno2", "192.168.2.5/24", BFO_RAILSEL_UP, "igb"),
        ifa("eno3", "192.168.3.5/24", 0, "igb"),
        ifa("ib0", "fd00:1b::5/64", UPR, "ipoib"),
        ifa("eno4", "fe80::5/64", UPR, "igb"),
        ifa("eno5", "192.168.1.6/24", UPR, "igb"),
    };
    char list[256], d[1024];
    (void)state;
    assert_int_equal(bfo_railsel_pick(&s, NULL, i, (int)(sizeof i / sizeof i[0])), BFO_OK);
    assert_int_equal(s.exchange, 1);
    assert_int_equal(bfo_railsel_local(&s), BFO_OK);
    assert_true(bfo_railsel_list(&s, list, sizeof list) > 0);
    assert_string_equal(list, "shm,192.168.1.5,tcp:[fd00:1b::5]");
    assert_true(bfo_railsel_describe(&s, d, sizeof d) > 0);
    assert_string_equal(s.skipped, "lo (loopback), docker0 (bridge), virbr0 (no carrier), br-3f2a (virtual), "
                                   "vethab12 (virtual), eno2 (no carrier), eno3 (down), "
                                   "eno4 (no IPv4 or global IPv6 address), eno5 (on 192.168.1.0/24, as eno1)");
    assert_non_null(strstr(d, "1 192.168.1.0/24: eno1 192.168.1.5"));
    assert_non_null(strstr(d, "2 fd00:1b::/64: ib0 tcp:[fd00:1b::5]"));
    assert_int_equal(bfo_railsel_slot(&s, "eno1"), 1);
    assert_int_equal(bfo_railsel_slot(&s, "fd00:1b::/64"), 2);
    assert_int_equal(bfo_railsel_slot(&s, "eno2"), -1);
}

/* What is not a value is refused with a sentence, before anything runs. */
static void test_bad_values_are_refused_with_why(void **state)
{
    static const struct {
        const char *value, *why;
    } bad[] = {
        { "10.36.1.0/33", "not a CIDR" },          { "10.36.1.0/", "not a CIDR" },
        { "eth1,,eth2", "an empty entry" },        { "eth1,", "an empty entry" },
        { "^", "excludes nothing" },               { "=10.0.0.0/8", "a network group's name" },
        { "fab=10.0.0.0/8+x", "is not a CIDR" },   { "a b", "not a rail" },
        { "10.36.1.0/24,10.36.1.7/24", "named twice" }, { "shm,shm", "named twice" },
        { "nosuch0", "not on this host" },
    };
    host h = make_host(1, 0, 0);
    bfo_railsel s;
    char nets[300];
    (void)state;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        if (bfo_railsel_pick(&s, bad[k].value, h.i, h.n) != BFO_ERR_INVALID || !strstr(s.err, bad[k].why))
            fail_msg("\"%s\": err \"%s\", want \"%s\"", bad[k].value, s.err, bad[k].why);
        /* the others learn of it through the exchange rather than waiting */
        assert_true(bfo_railsel_nets(&s, nets, sizeof nets) > 0);
        assert_int_equal(nets[0], '!');
    }
}

/* The exchange: a rank whose pick failed, a garbled text, too many networks. */
static void test_merge_refuses_failed_ranks_garbage_and_too_many_networks(void **state)
{
    host h = make_host(1, 0, 0);
    bfo_railsel s;
    const char *failed[] = { "0 10.36.1.0/24", "!interface eth2: not on this host" };
    const char *garbled[] = { "0 10.36.1.0/24", "zero 10.36.1.0/24" };
    const char *many[] = { "0 10.36.1.0/24;0 10.1.0.0/16;0 10.2.0.0/16;0 10.3.0.0/16;0 10.4.0.0/16",
                           "0 10.5.0.0/16;0 10.6.0.0/16;0 10.7.0.0/16;0 10.8.0.0/16" };
    const char *missing[] = { "0 10.36.1.0/24", NULL };
    (void)state;
    assert_int_equal(bfo_railsel_pick(&s, "eth1", h.i, h.n), BFO_OK);
    assert_int_equal(bfo_railsel_merge(&s, failed, 2), BFO_ERR_INVALID);
    assert_non_null(strstr(s.err, "rank 1 could not pick its rails: interface eth2"));
    assert_int_equal(bfo_railsel_merge(&s, garbled, 2), BFO_ERR_INVALID);
    assert_non_null(strstr(s.err, "rank 1's networks are garbled"));
    assert_int_equal(bfo_railsel_merge(&s, missing, 2), BFO_ERR_INVALID);
    assert_int_equal(bfo_railsel_merge(&s, many, 2), BFO_ERR_INVALID);
    assert_non_null(strstr(s.err, "9 networks among them"));
    assert_int_equal(bfo_railsel_merge(&s, many, 1), BFO_OK); /* 5: fits */
    assert_int_equal(s.nslots, 5);
}

/* A loopback interface named outright is its host's own network: two
 * hosts never share it (127.0.0.1 on one is not the other's). */
static void test_loopback_named_outright_is_its_hosts_own_network(void **state)
{
    host h = make_host(1, 0, 0);
    bfo_railsel s;
    char nets[300];
    (void)state;
    assert_int_equal(bfo_railsel_pick(&s, "lo,eth1", h.i, h.n), BFO_OK);
    assert_true(bfo_railsel_nets(&s, nets, sizeof nets) > 0);
    assert_non_null(strstr(nets, "0 127.0.0.0/8@"));
    assert_string_equal(s.r[0].rail, "127.0.0.1");
}

/* A literal loopback address names each host's own: flagged, for a job
 * across hosts to refuse (pml/bfo does). */
static void test_literal_loopback_is_flagged_one_host_only(void **state)
{
    host h = make_host(1, 0, 0);
    bfo_railsel s;
    (void)state;
    assert_int_equal(bfo_railsel_pick(&s, "127.0.0.2,tcp:[::1],10.36.1.11,tcp:127.0.0.3,shm", h.i, h.n), BFO_OK);
    assert_int_equal(s.n, 5);
    assert_int_equal(s.r[0].host_only, 1);
    assert_int_equal(s.r[1].host_only, 1);
    assert_int_equal(s.r[2].host_only, 0);
    assert_int_equal(s.r[3].host_only, 1);
    assert_int_equal(s.r[4].host_only, 0);
}

/* The value decides whether ranks exchange, never what a host has: the
 * same value on every host, so every rank takes the same path. */
static void test_whether_ranks_exchange_follows_the_value_alone(void **state)
{
    host full = make_host(1, 0, 0), one = make_host(4, 0, 1);
    bfo_railsel s;
    (void)state;
    assert_int_equal(bfo_railsel_pick(&s, "10.36.1.0/24,shm", full.i, full.n), BFO_OK);
    assert_int_equal(s.exchange, 0);
    assert_int_equal(bfo_railsel_pick(&s, "eth1,?eth2", full.i, full.n), BFO_OK);
    assert_int_equal(s.exchange, 1);
    assert_int_equal(bfo_railsel_pick(&s, "eth1,?eth2", one.i, one.n), BFO_OK);
    assert_int_equal(s.exchange, 1);
    assert_int_equal(s.n, 1);
    assert_non_null(strstr(s.skipped, "eth2 (not on this host, optional)"));
}

/* This machine's own interfaces read (whatever they are): loopback is
 * among them and flagged as such. */
static void test_host_reads_this_machines_interfaces(void **state)
{
    bfo_railsel_if i[BFO_RAILSEL_IF_MAX];
    int n = bfo_railsel_host(i, BFO_RAILSEL_IF_MAX), lo = 0;
    (void)state;
    assert_true(n > 0);
    for (int k = 0; k < n; k++)
        lo |= !strcmp(i[k].name, "lo") && i[k].family == 4 && (i[k].flags & BFO_RAILSEL_LOOPBACK) &&
              i[k].prefix == 8 && i[k].addr[0] == 127;
    assert_true(lo);
}

int main(void)
{
    test_list l = { 0 };
    for (size_t k = 0; k < sizeof job_cases / sizeof job_cases[0]; k++)
        test_list_add(&l, run_job_case, (void *)&job_cases[k], "job_%s", job_cases[k].name);
    test_list_add(&l, test_default_skips_loopback_bridges_virtual_and_down_and_says_why, NULL,
                  "default_skips_loopback_bridges_virtual_and_down_and_says_why");
    test_list_add(&l, test_bad_values_are_refused_with_why, NULL, "bad_values_are_refused_with_why");
    test_list_add(&l, test_merge_refuses_failed_ranks_garbage_and_too_many_networks, NULL,
                  "merge_refuses_failed_ranks_garbage_and_too_many_networks");
    test_list_add(&l, test_loopback_named_outright_is_its_hosts_own_network, NULL,
                  "loopback_named_outright_is_its_hosts_own_network");
    test_list_add(&l, test_literal_loopback_is_flagged_one_host_only, NULL, "literal_loopback_is_flagged_one_host_only");
    test_list_add(&l, test_whether_ranks_exchange_follows_the_value_alone, NULL,
                  "whether_ranks_exchange_follows_the_value_alone");
    test_list_add(&l, test_host_reads_this_machines_interfaces, NULL, "host_reads_this_machines_interfaces");
    return test_list_run(&l, "railsel");
}
