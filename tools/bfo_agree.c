// SPDX-License-Identifier: BSD-3-Clause
/* bfo agree-sim: groups' agreements (bfo_group.h) in the simulator, with
 * process deaths, false suspicions and partial partitions at every step
 * (sim/bfo_simgroup.h says what is injected and what is judged).
 *
 *   bfo agree-sim [--ranks N] [--rails R] [--agrees K] [--shrink]
 *                 [--kill R@OP] [--kill2 R@OP] [--suspect R@OP] [--cut A-B@OP]
 *                 [--explore kill|kill2|suspect|cut] [--random N] [--seed S]
 *                 [--trace] [--json]
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_simgroup.h"

static const char agree_usage[] =
    "usage: bfo agree-sim [options]\n"
    "  --ranks N              ranks, all in one group (2..8; default 3)\n"
    "  --rails R              rails between every pair (default 2)\n"
    "  --agrees K             agreements in a row (1..4; default 2)\n"
    "  --shrink               bfo_group_shrink after the first; the rest on the new group\n"
    "  --kill R@OP            rank R's process killed once the network carried OP operations\n"
    "  --kill2 R@OP           a second one\n"
    "  --suspect R@OP         rank R, alive, reported dead to the others (a false suspicion)\n"
    "  --cut A-B@OP           every rail between ranks A and B silent, both ways\n"
    "  --revoke R@OP          revoke mode: every rank leaves a broken pattern pending on the\n"
    "                         group (a receive and two sends nobody matches); rank R revokes\n"
    "                         the group at OP; a rank that learns of a failure revokes it too\n"
    "  --explore kill         every rank killed at every step of the run without faults\n"
    "  --explore kill2        every pair of ranks killed, the second 0, 3 or 12 steps after\n"
    "                         the first, at every step\n"
    "  --explore suspect      every rank falsely suspected at every step\n"
    "  --explore cut          every pair of ranks cut apart at every step\n"
    "  --explore revoke       every rank revoking at every step, alone, or killed 0, 2 or 6\n"
    "                         steps after (the revoker dies halfway through its notices)\n"
    "  --revoke-alone         no rank revokes on a failure: the revocation spreads by its\n"
    "                         notices alone (a revoker dead before any left is excused)\n"
    "  --random N             N runs with random kills, suspicions and cuts, half of them\n"
    "                         in revoke mode with a random revoker and step, and up to two\n"
    "                         rail faults (a rail down and up, a fragment lost or failed)\n"
    "  --seed S               the network's seed (default 1)\n"
    "  --only K               of the series --explore or --random makes, the K-th alone\n"
    "                         (a failure says its K; with --trace to see it)\n"
    "  --trace                every step of the agree machines, on stderr\n"
    "  --json                 one object: scenarios, results, disagreements, hangs, ...\n"
    "Exit 0 when every scenario passes: no hang, no disagreement, no invalid result.\n";

typedef struct ag_totals {
    uint64_t scenarios, passed, failed, results, disagreements, hangs, invalid, shrink_mismatch;
    uint64_t ended, kills, suspects, cuts, rounds, decided_own, adopted;
    uint64_t revoked_ops, discarded, notices, bad_status, revoke_lost;
    char *fbuf;
    size_t flen;
    FILE *failures;
} ag_totals;

static int ag_json;
static uint64_t ag_only, ag_count; /* --only K: the K-th scenario alone (1 is the first) */

static void ag_one(ag_totals *t, const sg_scenario *sc)
{
    sg_result r;
    ++ag_count;
    if (ag_only && ag_count != ag_only)
        return;
    sg_run(sc, &r);
    t->scenarios++;
    t->results += r.results;
    t->disagreements += r.disagreements;
    t->hangs += r.hangs;
    t->invalid += r.invalid;
    t->shrink_mismatch += r.shrink_mismatch;
    t->ended += r.ended;
    t->kills += r.kills;
    t->suspects += r.suspects;
    t->cuts += r.cuts;
    t->rounds += r.rounds;
    t->decided_own += r.decided_own;
    t->adopted += r.adopted;
    t->revoked_ops += r.revoked_ops;
    t->discarded += r.discarded;
    t->notices += r.notices;
    t->bad_status += r.bad_status;
    t->revoke_lost += r.revoke_lost;
    if (r.pass) {
        t->passed++;
        return;
    }
    t->failed++;
    if (t->failed > 20)
        return;
    if (!ag_json)
        fprintf(t->failures, "(scenario %" PRIu64 " of the series: --only %" PRIu64 " runs it alone)\n",
                ag_count, ag_count);
    if (ag_json)
        fprintf(t->failures,
                "%s{\"seed\":%" PRIu64 ",\"kill\":\"%d@%" PRIu64 "\",\"kill2\":\"%d@%" PRIu64
                "\",\"suspect\":\"%d@%" PRIu64 "\",\"cut\":\"%d-%d@%" PRIu64 "\",\"why\":\"%s\"}",
                t->failed > 1 ? "," : "", sc->seed, sc->kill[0] - 1, sc->kill_op[0], sc->kill[1] - 1,
                sc->kill_op[1], sc->suspect - 1, sc->suspect_op, sc->cut_a - 1, sc->cut_b - 1,
                sc->cut_op, r.why);
    else
        fprintf(t->failures,
                "FAIL seed %" PRIu64 " kill %d@%" PRIu64 " kill2 %d@%" PRIu64 " suspect %d@%" PRIu64
                " cut %d-%d@%" PRIu64 ": %s\n",
                sc->seed, sc->kill[0] - 1, sc->kill_op[0], sc->kill[1] - 1, sc->kill_op[1],
                sc->suspect - 1, sc->suspect_op, sc->cut_a - 1, sc->cut_b - 1, sc->cut_op, r.why);
}

static int ag_at(const char *v, int *rank, uint64_t *op)
{
    char *end;
    long r = strtol(v, &end, 10);
    if (*end != '@' || r < 0)
        return 0;
    *rank = (int)r + 1;
    *op = strtoull(end + 1, &end, 10);
    return *end == 0;
}

static uint64_t ag_rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

int bfo_cmd_agree_sim(int argc, char **argv);
int bfo_cmd_agree_sim(int argc, char **argv)
{
    sg_scenario base;
    ag_totals t;
    const char *explore = NULL;
    uint64_t random_n = 0, ops;
    memset(&base, 0, sizeof base);
    memset(&t, 0, sizeof t);
    base.ranks = 3;
    base.rails = 2;
    base.seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int two = 1;
        if (!strcmp(a, "--shrink")) {
            base.shrink = 1;
            two = 0;
        } else if (!strcmp(a, "--revoke-alone")) {
            base.revoke_alone = 1;
            two = 0;
        } else if (!strcmp(a, "--trace")) {
            base.trace = stderr;
            two = 0;
        } else if (!strcmp(a, "--json")) {
            ag_json = 1;
            two = 0;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(agree_usage, stdout);
            return 0;
        } else if (!v) {
            fprintf(stderr, "bfo agree-sim: %s wants a value\n%s", a, agree_usage);
            return 2;
        } else if (!strcmp(a, "--ranks")) {
            base.ranks = atoi(v);
        } else if (!strcmp(a, "--rails")) {
            base.rails = atoi(v);
        } else if (!strcmp(a, "--agrees")) {
            base.agrees = atoi(v);
        } else if (!strcmp(a, "--seed")) {
            base.seed = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--random")) {
            random_n = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--only")) {
            ag_only = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--explore")) {
            explore = v;
        } else if (!strcmp(a, "--kill")) {
            if (!ag_at(v, &base.kill[0], &base.kill_op[0]))
                goto bad;
        } else if (!strcmp(a, "--kill2")) {
            if (!ag_at(v, &base.kill[1], &base.kill_op[1]))
                goto bad;
        } else if (!strcmp(a, "--suspect")) {
            if (!ag_at(v, &base.suspect, &base.suspect_op))
                goto bad;
        } else if (!strcmp(a, "--revoke")) {
            if (!ag_at(v, &base.revoke, &base.revoke_op))
                goto bad;
        } else if (!strcmp(a, "--cut")) {
            int x = atoi(v) + 1;
            const char *d = strchr(v, '-');
            if (!d || !ag_at(d + 1, &base.cut_b, &base.cut_op))
                goto bad;
            base.cut_a = x;
        } else {
            fprintf(stderr, "bfo agree-sim: unknown option %s\n%s", a, agree_usage);
            return 2;
        }
        i += two;
        continue;
    bad:
        fprintf(stderr, "bfo agree-sim: %s %s: want RANK@OP (or A-B@OP for --cut)\n", a, v);
        return 2;
    }
    if (base.ranks < 2 || base.ranks > SG_MAX_RANKS || base.rails < 1 || base.rails > BFO_MAX_RAILS ||
        base.agrees < 0 || base.agrees > SG_MAX_AGREES || base.kill[0] > base.ranks ||
        base.kill[1] > base.ranks || base.suspect > base.ranks || base.cut_a > base.ranks ||
        base.cut_b > base.ranks || (base.cut_a && base.cut_a == base.cut_b)) {
        fprintf(stderr, "bfo agree-sim: a value out of range\n%s", agree_usage);
        return 2;
    }
    if (explore && strcmp(explore, "kill") && strcmp(explore, "kill2") && strcmp(explore, "suspect") &&
        strcmp(explore, "cut") && strcmp(explore, "revoke")) {
        fprintf(stderr, "bfo agree-sim: --explore wants kill, kill2, suspect, cut or revoke\n");
        return 2;
    }
    t.failures = open_memstream(&t.fbuf, &t.flen);
    {
        sg_scenario sc = base;
        sg_result r;
        sc.kill[0] = sc.kill[1] = sc.suspect = sc.cut_a = sc.cut_b = 0;
        if (explore && !strcmp(explore, "revoke")) { /* its pattern, revoked once it is out */
            sc.revoke = 1;
            sc.revoke_op = 1;
        }
        sg_run(&sc, &r); /* the steps an undisturbed run takes */
        ops = r.ops;
    }
    if (!explore && !random_n)
        ag_one(&t, &base);
    for (uint64_t op = 1; explore && op <= ops; op++) {
        sg_scenario sc = base;
        sc.seed = base.seed * 1000003 + op;
        sc.report_ns = op % 2 ? 5000000ull : 1000000ull;
        for (int v = 0; v < base.ranks; v++) {
            if (!strcmp(explore, "kill")) {
                sc.kill[0] = v + 1;
                sc.kill_op[0] = op;
                ag_one(&t, &sc);
            } else if (!strcmp(explore, "revoke")) {
                static const uint64_t after[3] = { 0, 2, 6 };
                sc.revoke = v + 1;
                sc.revoke_op = op;
                sc.kill[0] = 0;
                ag_one(&t, &sc);
                for (int d = 0; d < 3; d++) {
                    sc.kill[0] = v + 1;
                    sc.kill_op[0] = op + after[d];
                    ag_one(&t, &sc);
                }
            } else if (!strcmp(explore, "suspect")) {
                sc.suspect = v + 1;
                sc.suspect_op = op;
                ag_one(&t, &sc);
            } else {
                for (int u = v + 1; u < base.ranks; u++) {
                    if (!strcmp(explore, "cut")) {
                        sc.cut_a = v + 1;
                        sc.cut_b = u + 1;
                        sc.cut_op = op;
                        ag_one(&t, &sc);
                        continue;
                    }
                    for (int d = 0; d < 3; d++) {
                        static const uint64_t gap[3] = {0, 3, 12};
                        sc.kill[0] = (d == 1 ? u : v) + 1; /* either of the two first */
                        sc.kill[1] = (d == 1 ? v : u) + 1;
                        sc.kill_op[0] = op;
                        sc.kill_op[1] = op + gap[d];
                        ag_one(&t, &sc);
                    }
                }
            }
        }
    }
    {
        uint64_t x = base.seed * 0x9e3779b97f4a7c15ull + 1;
        for (uint64_t i = 0; i < random_n; i++) {
            sg_scenario sc = base;
            const uint64_t span = ops + ops / 2 + 1;
            sc.seed = ag_rnd(&x);
            sc.report_ns = ag_rnd(&x) % 21 * 1000000ull;
            sc.nfaults = 0; /* rail faults besides: no death of theirs */
            for (int k = (int)(ag_rnd(&x) % 3); k > 0; k--) {
                sn_fault *f = &sc.faults[sc.nfaults++];
                memset(f, 0, sizeof *f);
                f->n = 1 + ag_rnd(&x) % span;
                if (ag_rnd(&x) % 2) {
                    sn_fault *u = &sc.faults[sc.nfaults++]; /* and back later */
                    f->what = SN_FAULT_RAIL_DOWN;
                    f->rail = (int)(ag_rnd(&x) % (uint64_t)sc.rails);
                    *u = *f;
                    u->what = SN_FAULT_RAIL_UP;
                    u->n = f->n + 1 + ag_rnd(&x) % 40;
                } else {
                    f->what = SN_FAULT_TYPE; /* any fragment: lost, or delivered and failed */
                    f->kind = ag_rnd(&x) % 2 ? SN_LOSE : SN_DELIVER_ERROR;
                }
            }
            if (ag_rnd(&x) % 2) { /* revoke mode: a rank revokes at a random step */
                sc.revoke = 1 + (int)(ag_rnd(&x) % (uint64_t)sc.ranks);
                sc.revoke_op = 1 + ag_rnd(&x) % span;
            }
            switch (ag_rnd(&x) % 5) { /* one, two deaths; a suspicion; a cut; a death and a cut */
            case 4:
                sc.cut_a = 1 + (int)(ag_rnd(&x) % (uint64_t)sc.ranks);
                sc.cut_b = 1 + (sc.cut_a + (int)(ag_rnd(&x) % (uint64_t)(sc.ranks - 1))) % sc.ranks;
                sc.cut_op = 1 + ag_rnd(&x) % span;
                /* fall through */
            case 0:
                sc.kill[0] = 1 + (int)(ag_rnd(&x) % (uint64_t)sc.ranks);
                sc.kill_op[0] = 1 + ag_rnd(&x) % span;
                break;
            case 1:
                sc.kill[0] = 1 + (int)(ag_rnd(&x) % (uint64_t)sc.ranks);
                sc.kill[1] = 1 + (int)(ag_rnd(&x) % (uint64_t)sc.ranks);
                sc.kill_op[0] = 1 + ag_rnd(&x) % span;
                sc.kill_op[1] = 1 + ag_rnd(&x) % span;
                break;
            case 2:
                sc.suspect = 1 + (int)(ag_rnd(&x) % (uint64_t)sc.ranks);
                sc.suspect_op = 1 + ag_rnd(&x) % span;
                break;
            case 3:
                sc.cut_a = 1 + (int)(ag_rnd(&x) % (uint64_t)sc.ranks);
                sc.cut_b = 1 + (sc.cut_a + (int)(ag_rnd(&x) % (uint64_t)(sc.ranks - 1))) % sc.ranks;
                sc.cut_op = 1 + ag_rnd(&x) % span;
                break;
            }
            ag_one(&t, &sc);
        }
    }
    fclose(t.failures);
    if (ag_json) {
        printf("{\"scenarios\":%" PRIu64 ",\"passed\":%" PRIu64 ",\"failed\":%" PRIu64
               ",\"steps\":%" PRIu64 ",\"results\":%" PRIu64 ",\"disagreements\":%" PRIu64
               ",\"hangs\":%" PRIu64 ",\"invalid\":%" PRIu64 ",\"shrink_mismatches\":%" PRIu64
               ",\"ended\":%" PRIu64 ",\"kills\":%" PRIu64 ",\"suspicions\":%" PRIu64
               ",\"cuts\":%" PRIu64 ",\"rounds\":%" PRIu64 ",\"decided_own\":%" PRIu64
               ",\"adopted\":%" PRIu64 ",\"revoked_ops\":%" PRIu64 ",\"discarded\":%" PRIu64
               ",\"revoke_notices\":%" PRIu64 ",\"bad_status\":%" PRIu64 ",\"revoke_lost\":%" PRIu64
               ",\"failures\":[%s]}\n",
               t.scenarios, t.passed, t.failed, ops, t.results, t.disagreements, t.hangs, t.invalid,
               t.shrink_mismatch, t.ended, t.kills, t.suspects, t.cuts, t.rounds, t.decided_own,
               t.adopted, t.revoked_ops, t.discarded, t.notices, t.bad_status, t.revoke_lost, t.fbuf ? t.fbuf : "");
    } else {
        if (t.fbuf && t.flen)
            fputs(t.fbuf, stdout);
        printf("scenarios %" PRIu64 " (an undisturbed run takes %" PRIu64 " steps): results %" PRIu64
               ", disagreements %" PRIu64 ", hangs %" PRIu64 ", invalid %" PRIu64
               ", shrink mismatches %" PRIu64 "\n",
               t.scenarios, ops, t.results, t.disagreements, t.hangs, t.invalid, t.shrink_mismatch);
        printf("faults: kills %" PRIu64 ", false suspicions %" PRIu64 ", cuts %" PRIu64
               ", ranks that ended themselves %" PRIu64 "; rounds %" PRIu64
               ", decided by their own round %" PRIu64 ", by a member's decision %" PRIu64 "\n",
               t.kills, t.suspects, t.cuts, t.ended, t.rounds, t.decided_own, t.adopted);
        if (base.revoke || (explore && !strcmp(explore, "revoke")))
            printf("revoke: pattern requests ended REVOKED %" PRIu64 ", sends discarded by a revoked "
                   "receiver %" PRIu64 ", revocations learnt from a notice %" PRIu64
                   ", other endings %" PRIu64 "; revocations lost with their revoker %" PRIu64 "\n",
                   t.revoked_ops, t.discarded, t.notices, t.bad_status, t.revoke_lost);
        printf("agree-sim: %" PRIu64 " passed, %" PRIu64 " failed\n", t.passed, t.failed);
    }
    free(t.fbuf);
    return t.failed ? 1 : 0;
}
