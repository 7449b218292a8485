// SPDX-License-Identifier: BSD-3-Clause
/* bfo - the command-line tool.
 *
 *   bfo sim [--ranks N] [--rails R] [--rail-bw W1,W2,...] [--seed S]
 *           [--protocol eager|copy|put|get|auto] [--msg FROM>TO:SIZE[:OPTION]...]...
 *           [--fault SPEC]... [--explore single|double] [--random N] [--trace] [--json]
 *           [--rdma-rails R1,R2,...|none] [--start-ms MS] [--seq-start N] [--budget SIZE]
 *           [--leave] [--leave-gap MS] [--place] [--kill R@MS[+MS]|R@opN[+MS]|random]
 *           [--exchange K[:SIZE]] [--grow] [--progress-us US] [--mem]
 *
 *   bfo run -n N [--rails ADDR,ADDR] -- PROGRAM ARGS   (tools/bfo_tcp_cmds.c)
 *   bfo stream [--size S|--sizes LIST] [--count N] [--json]
 *   bfo abi      the layout bfo (and the archives of its build) was compiled
 *                with: the fields of bfo_abi, one "name value" a line
 *
 * bfo sim runs the engine on the deterministic simulated network (sim/) and judges
 * every scenario: each message delivered once with the right bytes (or the
 * unreachable error when no rail is left), no request waiting forever, every
 * pool entry back, both ends agreeing on the rails (with --leave: the ranks
 * leave at the end, and no rank fails a rail of a peer after that peer's
 * BYE).  Exit status 0 if and
 * only if no scenario failed.  A failing scenario is printed as the command
 * that replays it.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* mincore, MAP_ANONYMOUS, madvise (--mem) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bfo_setting.h"
#include "bfo_simrun.h"

static const char usage[] =
    "usage: bfo sim [--ranks N] [--rails R] [--rail-bw W1,W2,...] [--seed S]\n"
    "               [--protocol eager|copy|put|get|auto] [--msg FROM>TO:SIZE[:OPTION]...]...\n"
    "               [--fault SPEC]... [--explore single|double|kill] [--random N] [--trace] [--json]\n"
    "               [--rdma-rails R1,R2,...|none] [--start-ms MS] [--seq-start N] [--budget SIZE]\n"
    "               [--data iov|pack|mixed] [--data-rails R1,R2,...|none] [--leave] [--leave-gap MS]\n"
    "               [--place] [--kill R@MS[+MS]|R@opN[+MS]|random] [--relay] [--cut A-B@N[-M]]\n"
    "               [--exchange K[:SIZE]] [--grow] [--progress-us US] [--mem]\n"
    "  --relay                  relay on (bfo_config.relay): a peer that no rail reaches goes\n"
    "                           through a third rank that reaches it (one hop); the messages\n"
    "                           must all arrive, none given up\n"
    "  --cut A-B@N[-M]          from the N-th operation, every rail between ranks A and B\n"
    "                           silent both ways (open again from the M-th): path faults;\n"
    "                           with --relay no message may end with an error\n"
    "  --explore cut            (--relay, 3 ranks or more) every pair of ranks cut at every\n"
    "                           step, healed 40 operations later every other step\n"
    "  --kill R@MS[+MS]         rank R's process is killed (no BYE) MS ms after the messages are\n"
    "                           posted, and reported dead to the others (bfo_peer_failed) +MS\n"
    "                           later (default 5); messages to or from it are delivered or end\n"
    "                           BFO_ERR_PROC_FAILED (an ANY_SOURCE receive PROC_FAILED_PENDING,\n"
    "                           then acknowledged and posted again), never hang; the others\n"
    "                           must all arrive.  R@opN: once the network carried N\n"
    "                           operations.  random: with --random, a random rank at a random\n"
    "                           step (1-60 operations, reported 0-20 ms later)\n"
    "  --explore kill           every rank killed at every step: once the network carried k\n"
    "                           operations, for every k the scenario posts\n"
    "  --msg    0>1:64  0>1:4M  1>0:200K:any  1>1:9K   (K and M suffixes; FROM = TO: to itself;\n"
    "           none given: a mixed set).  OPTIONs: tag=T; any (an ANY_SOURCE receive);\n"
    "           ctx=C (context id C; the ranks in it are not the engine's); sync (a\n"
    "           synchronous send: it must not complete before its receive matched);\n"
    "           late (the receive is posted 200 ms after the send); probe (the receive is\n"
    "           posted once bfo_iprobe sees the message); mprobe (bfo_improbe takes it,\n"
    "           bfo_imrecv receives it 30 ms later); cancel (the receive is cancelled a few\n"
    "           ms after the send and, if that worked, posted again); cancel-send (the send\n"
    "           is cancelled at once: if that worked, nothing of it may match)\n"
    "  --fault  TYPE#N:KIND     the N-th fragment of TYPE posted (from 1); TYPE one of\n";
/* ... the fragment types (print_usage), then: */
static const char usage_tail[] =
    "                           KIND lose | deliver-error | delay\n"
    "           railR@op:N:down|up   rail R (from 0) fails / comes back when the N-th operation\n"
    "                           of the run is posted\n"
    "           railR@op:N:silent|hold|open[:A>B]   from the N-th operation, rail R (from rank\n"
    "                           A to rank B, or every way) drops in silence / holds frames\n"
    "                           back (a stalled receiver) / works again (sim/bfo_simnet.h)\n"
    "  --explore single         every single fault over the scenario (or the standard set)\n"
    "           double          every pair of faults (small scenarios)\n"
    "  --random N               N random schedules of several faults each\n"
    "  --protocol               eager: every message eager; copy: rendezvous by copy; put, get:\n"
    "                           every rendezvous by RDMA PUT or GET; auto (default): the engine's\n"
    "                           choice (GET from 64 KiB when the rails can RDMA, else copy)\n"
    "  --rdma-rails LIST        the rails that can RDMA (default: all; none: no rail can); the\n"
    "                           others copy\n"
    "  --seq-start N            every peer's message sequence starts at N (default 1): runs\n"
    "                           past the wrap of 16 or 32 bits (65530, 4294967290)\n"
    "  --budget SIZE            every engine's unexpected_budget (default 64M): each peer's\n"
    "                           credit window is SIZE / (ranks - 1); past it, sends of eager\n"
    "                           size go by rendezvous\n"
    "  --data KIND              messages given as descriptions (bfo_isend_data, bfo_irecv_data):\n"
    "                           iov: iovec lists with gaps between segments, cut differently\n"
    "                           by sender and receiver; pack: pack/unpack callbacks; mixed:\n"
    "                           one side packs, the other takes an iovec (default: buffers)\n"
    "  --data-rails LIST        described data: the rails whose transport reads it in place\n"
    "                           (post_send_data; default 0); the others: the engine's staging\n"
    "  --start-ms MS            every rail is connected at init (bfo_config.connect_at_init)\n"
    "                           and comes up for MS ms (simulated) before the messages\n"
    "                           are posted (default 0: at once)\n"
    "  --leave                  once every message is done the ranks leave (bfo_engine_leave: a\n"
    "                           BYE on every rail) and their processes end; fails a run in which\n"
    "                           a rank fails a rail of a peer after its BYE, or, with no fault,\n"
    "                           maps anything out, gives a peer up or waits for a BYE\n"
    "  --leave-gap MS           with --leave: rank i leaves MS ms after rank i-1 (default 0)\n"
    "  --place                  FRAGs are read in place as the TCP transport reads them\n"
    "                           (bfo_engine_place): half the payload, other messages, then the\n"
    "                           rest, the receive asked first (bfo_engine_place_ok)\n"
    "  --json                   one object: every message is counted once, as delivered (or\n"
    "                           corrupt), errored (its receive ended with an error, reported)\n"
    "                           or hung (a request never completed); lost: the hung ones whose\n"
    "                           send completed as delivered (told to nobody)\n"
    "  --trace                  every transition of every machine, and every frame and RDMA\n"
    "                           operation on the wire (tools/bfo_seq.py draws them)\n";
/* ... and many ranks */
static const char usage_many[] =
    "  --ranks N                2 to 4096 (default 2): the network's tables are ranks x ranks\n"
    "                           x rails (4,096 ranks on 2 rails: 0.8 GB of address space)\n"
    "  --exchange K[:SIZE]      the messages: every rank sends SIZE bytes (default 1K) to each\n"
    "                           of K peers, rank + 1, + 2, + 4, ... (mod ranks; K at most\n"
    "                           log2 of ranks, rounded up), each receive posted for its sender\n"
    "  --grow                   the engines' pools grow as they need (bfo_config.grow), as\n"
    "                           bfo_net's do under pml/bfo; else fixed (the engine's default)\n"
    "  --progress-us US         every engine's timers (bfo_engine_progress) once US us of\n"
    "                           simulated time went by since they last ran: a timer fires up\n"
    "                           to US late, never early (frames and completions reach an\n"
    "                           engine at once, whatever US); 0: every engine's after every\n"
    "                           step of the network (the default up to 8 ranks; beyond, 10000:\n"
    "                           every engine's after every step costs ranks x ranks x rails)\n"
    "  --mem                    the engines' memory, one line (sim-mem; --json: \"mem\"): each\n"
    "                           rank's block (bfo_engine_mem_size), what a peer more adds to it\n"
    "                           (per_peer), what a rank touched of it (pages read or written\n"
    "                           by the end: mincore), what its pools grew (--grow); means over\n"
    "                           ranks; and the run's wall time\n";

typedef struct options {
    int ranks, rails, json, trace, explore, random_n, protocol, nmsgs, nfaults, data, leave;
    uint64_t leave_gap_ns;
    int place, relay, cut;
    int exchange, grow, mem;
    size_t exchange_size;
    long long progress_us; /* --progress-us; -1: not given */
    int kill_mode; /* --kill: 0 none, 1 given (kill_rank, kill_at_ns, report_ns), 2 random */
    int kill_rank;
    uint64_t kill_at_ns, report_ns, kill_op;
    unsigned data_rails;
    uint64_t start_ns, seq_start;
    size_t budget;
    unsigned plain_rails;
    unsigned bw[BFO_MAX_RAILS];
    uint64_t seed;
    sr_msg msgs[SR_MAX_MSGS];
    sn_fault faults[SN_MAX_FAULTS];
} options;

/* --ranks: the network's tables are ranks x ranks x rails (bfo_simnet.h) */
#define SIM_MAX_RANKS 4096
/* up to this many ranks every engine's timers run after every step of the
 * network (--progress-us 0), as bfo sim's always did; beyond, every 10 ms */
#define SIM_EXACT_RANKS 8

static const char *const proto_names[] = { "auto", "eager", "copy", "put", "get" };
static const char *const data_names[] = { "buffer", "iov", "pack", "mixed" };

typedef struct totals {
    uint64_t scenarios, passed, failed, delivered, errored, lost, duplicates, corrupt, hung, leaked,
        unreachable_errors, restarts, mapouts, readmissions, eagers, copies, puts, gets, rdma_ops;
    uint64_t cancelled, early_syncs, probe_errors, cancel_errors, credit_rndv, over_window;
    uint64_t byes_sent, byes_taken, leave_timeouts, left_failures;
    uint64_t kills, failed_errors, pending_reposts;
    uint64_t relayed_frames, relay_passed, relay_refused, routes_found, routes_lost;
    uint64_t rail_bytes[BFO_MAX_RAILS];
    uint64_t ops, engines, mem_bytes, mem_per_peer, grown_bytes; /* --mem */
    int shown;
    FILE *failures; /* JSON objects of failures, or the human lines */
} totals;

/* The usage, with the fragment types of the alphabet (bfo_frag_name: none
 * is written here) and the simulator's RDMA operations. */
static void print_usage(FILE *o)
{
    static const char *const more[] = { "WRITE", "READ", "ANY;" };
    const int indent = 27, width = 96;
    int col = 0;
    fputs(usage, o);
    for (int t = 0; t < 256 + 3; t++) {
        const char *n = t < 256 ? bfo_frag_name(t) : more[t - 256];
        if (!n)
            continue;
        if (col && col + 1 + (int)strlen(n) > width) {
            fputc('\n', o);
            col = 0;
        }
        col += col ? fprintf(o, " %s", n) : fprintf(o, "%*s%s", indent, "", n);
    }
    fputc('\n', o);
    fputs(usage_tail, o);
    fputs(usage_many, o);
}

static int die(const char *what, const char *arg)
{
    fprintf(stderr, "bfo sim: %s: %s\n", what, arg);
    print_usage(stderr);
    exit(2);
}

/* The one size syntax (bfo_setting.h: digits, then K, M or G); *end after it. */
static size_t parse_size(const char *s, const char **end)
{
    unsigned long long v;
    if (bfo_size_prefix(s, end, &v) != 0)
        die("not a size", s);
    return (size_t)v;
}

/* A list of rail numbers (or "none") as a bit per rail. */
static unsigned parse_rails(const char *opt, const char *v)
{
    unsigned can = 0;
    for (const char *p = strcmp(v, "none") ? v : ""; *p;) {
        char *e;
        long k = strtol(p, &e, 10);
        if (e == p || k < 0 || k >= BFO_MAX_RAILS || (*e && *e != ','))
            die(opt, v);
        can |= 1u << k;
        p = *e == ',' ? e + 1 : e;
    }
    return can;
}

static sr_msg parse_msg(const char *s)
{
    sr_msg m;
    char *e;
    const char *p;
    memset(&m, 0, sizeof m);
    m.src = (int)strtol(s, &e, 10);
    if (e == s || *e != '>')
        die("--msg wants FROM>TO:SIZE", s);
    p = e + 1;
    m.dst = (int)strtol(p, &e, 10);
    if (e == p || *e != ':')
        die("--msg wants FROM>TO:SIZE", s);
    m.size = parse_size(e + 1, &p);
    m.tag = -2; /* not given */
    while (*p == ':') {
        if (!strncmp(p, ":tag=", 5)) {
            m.tag = (int)strtol(p + 5, &e, 10);
            p = e;
        } else if (!strncmp(p, ":any", 4)) {
            m.any = 1;
            p += 4;
        } else if (!strncmp(p, ":ctx=", 5)) {
            m.ctx = (uint32_t)strtoul(p + 5, &e, 10);
            if (e == p + 5)
                die("--msg :ctx= wants a number", p);
            p = e;
        } else if (!strncmp(p, ":sync", 5)) {
            m.sync = 1;
            p += 5;
        } else if (!strncmp(p, ":late", 5)) {
            m.late = 1;
            p += 5;
        } else if (!strncmp(p, ":mprobe", 7)) {
            m.probe = SR_MPROBE;
            p += 7;
        } else if (!strncmp(p, ":probe", 6)) {
            m.probe = SR_PROBE;
            p += 6;
        } else if (!strncmp(p, ":cancel-send", 12)) {
            m.cancel = SR_CANCEL_SEND;
            p += 12;
        } else if (!strncmp(p, ":cancel", 7)) {
            m.cancel = SR_CANCEL_RECV;
            p += 7;
        } else {
            die("unknown --msg option", p);
        }
    }
    if (*p)
        die("trailing text in --msg", p);
    return m;
}

static int frag_type_of(const char *name, size_t len)
{
    if (len == 3 && !strncmp(name, "ANY", 3))
        return 0;
    for (int t = 1; t < 256; t++) {
        const char *n = bfo_frag_name(t);
        if (n && strlen(n) == len && !strncmp(n, name, len))
            return t;
    }
    if (len == 5 && !strncmp(name, "WRITE", 5))
        return SN_TYPE_WRITE;
    if (len == 4 && !strncmp(name, "READ", 4))
        return SN_TYPE_READ;
    return -1;
}

static const char *const path_names[] = { "open", "silent", "hold" };

static sn_fault parse_fault(const char *s)
{
    sn_fault f;
    const char *h = strchr(s, '#');
    memset(&f, 0, sizeof f);
    if (!strncmp(s, "rail", 4) && strstr(s, "@op:")) {
        char *e;
        f.rail = (int)strtol(s + 4, &e, 10);
        if (strncmp(e, "@op:", 4))
            die("bad rail fault", s);
        f.n = strtoull(e + 4, &e, 10);
        if (!strcmp(e, ":down"))
            f.what = SN_FAULT_RAIL_DOWN;
        else if (!strcmp(e, ":up"))
            f.what = SN_FAULT_RAIL_UP;
        for (int k = 0; k < 3 && !f.what; k++) {
            size_t len = strlen(path_names[k]);
            if (e[0] != ':' || strncmp(e + 1, path_names[k], len) || (e[1 + len] && e[1 + len] != ':'))
                continue;
            f.what = SN_FAULT_PATH;
            f.kind = k;
            if (e[1 + len]) { /* :A>B */
                const char *p = e + 2 + len;
                f.from = (int)strtol(p, &e, 10);
                if (e == p || *e != '>')
                    die("a path fault wants :A>B", s);
                p = e + 1;
                f.to = (int)strtol(p, &e, 10);
                if (e == p || *e || f.from == f.to || f.from < 0 || f.to < 0)
                    die("a path fault wants :A>B, two ranks", s); /* within --ranks: cmd_sim */
            }
        }
        if (!f.what)
            die("rail fault wants :down, :up, :silent, :hold or :open", s);
        if (f.n == 0 || f.rail < 0 || f.rail >= BFO_MAX_RAILS)
            die("bad rail fault", s);
        return f;
    }
    if (!h)
        die("--fault wants TYPE#N:KIND or railR@op:N:down|up", s);
    f.what = SN_FAULT_TYPE;
    f.type = frag_type_of(s, (size_t)(h - s));
    if (f.type == -1)
        die("unknown fragment type", s);
    char *e;
    f.n = strtoull(h + 1, &e, 10);
    if (f.n == 0 || *e != ':')
        die("--fault wants TYPE#N:KIND with N from 1", s);
    if (!strcmp(e + 1, "lose"))
        f.kind = SN_LOSE;
    else if (!strcmp(e + 1, "deliver-error"))
        f.kind = SN_DELIVER_ERROR;
    else if (!strcmp(e + 1, "delay"))
        f.kind = SN_DELAY;
    else
        die("KIND is lose, deliver-error or delay", s);
    return f;
}

static void fault_str(const sn_fault *f, char *buf, size_t cap)
{
    static const char *kinds[] = { "none", "lose", "deliver-error", "delay" };
    if (f->what == SN_FAULT_RAIL_DOWN || f->what == SN_FAULT_RAIL_UP)
        snprintf(buf, cap, "rail%d@op:%" PRIu64 ":%s", f->rail, f->n,
                 f->what == SN_FAULT_RAIL_DOWN ? "down" : "up");
    else if (f->what == SN_FAULT_PATH && f->from != f->to)
        snprintf(buf, cap, "rail%d@op:%" PRIu64 ":%s:%d>%d", f->rail, f->n, path_names[f->kind],
                 f->from, f->to);
    else if (f->what == SN_FAULT_PATH)
        snprintf(buf, cap, "rail%d@op:%" PRIu64 ":%s", f->rail, f->n, path_names[f->kind]);
    else
        snprintf(buf, cap, "%s#%" PRIu64 ":%s",
                 f->type == SN_TYPE_WRITE ? "WRITE"
                 : f->type == SN_TYPE_READ ? "READ"
                 : f->type                 ? bfo_frag_name(f->type)
                                           : "ANY",
                 f->n, kinds[f->kind]);
}

/* The command that replays a scenario. */
static void replay_str(const sr_scenario *sc, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "bfo sim --ranks %d --rails %d --seed %" PRIu64,
                                sc->ranks, sc->rails, sc->seed);
    if (sc->seq_start && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --seq-start %" PRIu64, sc->seq_start);
    if (sc->unexpected_budget && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --budget %zu", sc->unexpected_budget);
    if (sc->start_ns && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --start-ms %" PRIu64, sc->start_ns / 1000000);
    if (sc->leave && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --leave");
    if (sc->kill && sc->kill_op && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --kill %d@op%" PRIu64 "+%" PRIu64, sc->kill - 1, sc->kill_op,
                              sc->report_ns / 1000000);
    else if (sc->kill && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --kill %d@%" PRIu64 "+%" PRIu64, sc->kill - 1,
                              sc->kill_at_ns / 1000000, sc->report_ns / 1000000);
    if (sc->place && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --place");
    if (sc->exchange && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --exchange %d:%zu", sc->exchange, sc->exchange_size);
    if (sc->grow && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --grow");
    if (sc->progress_ns != (sc->ranks > SIM_EXACT_RANKS ? 10000000u : 0u) && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --progress-us %" PRIu64, sc->progress_ns / 1000);
    if (sc->relay && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --relay");
    if (sc->leave && sc->leave_gap_ns && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --leave-gap %" PRIu64, sc->leave_gap_ns / 1000000);
    if (sc->protocol != SR_P_AUTO && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, " --protocol %s", proto_names[sc->protocol]);
    if (sc->plain_rails && n < cap) {
        n += (size_t)snprintf(buf + n, cap - n, " --rdma-rails ");
        if (!(~sc->plain_rails & ((1u << sc->rails) - 1)) && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "none");
        for (int k = 0, first = 1; k < sc->rails && n < cap; k++)
            if (!((sc->plain_rails >> k) & 1)) {
                n += (size_t)snprintf(buf + n, cap - n, "%s%d", first ? "" : ",", k);
                first = 0;
            }
    }
    if (sc->data && n < cap) {
        n += (size_t)snprintf(buf + n, cap - n, " --data %s --data-rails ", data_names[sc->data]);
        if (!(sc->data_rails & ((1u << sc->rails) - 1)) && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "none");
        for (int k = 0, first = 1; k < sc->rails && n < cap; k++)
            if ((sc->data_rails >> k) & 1) {
                n += (size_t)snprintf(buf + n, cap - n, "%s%d", first ? "" : ",", k);
                first = 0;
            }
    }
    for (int k = 0; k < sc->rails && sc->rail_bw[k] && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%u", k ? "," : " --rail-bw ", sc->rail_bw[k]);
    for (int i = 0; i < sc->nmsgs && n < cap; i++)
    {
        const sr_msg *m = &sc->msgs[i];
        char ctx[24] = "";
        if (m->ctx)
            snprintf(ctx, sizeof ctx, ":ctx=%u", (unsigned)m->ctx);
        n += (size_t)snprintf(buf + n, cap - n, " --msg %d>%d:%zu:tag=%d%s%s%s%s%s%s", m->src,
                              m->dst, m->size, m->tag, m->any ? ":any" : "", ctx,
                              m->sync ? ":sync" : "", m->late ? ":late" : "",
                              m->probe == SR_PROBE ? ":probe" : m->probe == SR_MPROBE ? ":mprobe" : "",
                              m->cancel == SR_CANCEL_RECV   ? ":cancel"
                              : m->cancel == SR_CANCEL_SEND ? ":cancel-send"
                                                            : "");
    }
    for (int i = 0; i < sc->nfaults && n < cap; i++) {
        char f[64];
        fault_str(&sc->faults[i], f, sizeof f);
        n += (size_t)snprintf(buf + n, cap - n, " --fault %s", f);
    }
}

static void account(totals *t, const sr_scenario *sc, const sr_result *r, int json)
{
    t->scenarios++;
    t->delivered += r->delivered;
    t->lost += r->lost;
    t->errored += r->errored;
    t->duplicates += r->duplicates;
    t->corrupt += r->corrupt;
    t->hung += r->hung;
    t->leaked += r->leaked;
    t->unreachable_errors += r->unreachable_errors;
    t->restarts += r->restarts;
    t->mapouts += r->mapouts;
    t->readmissions += r->readmissions;
    t->relayed_frames += r->relayed_frames;
    t->relay_passed += r->relay_passed;
    t->relay_refused += r->relay_refused;
    t->routes_found += r->routes_found;
    t->routes_lost += r->routes_lost;
    t->eagers += r->eagers;
    t->copies += r->copies;
    t->puts += r->puts;
    t->gets += r->gets;
    t->rdma_ops += r->rdma_ops;
    t->cancelled += r->cancelled;
    t->early_syncs += r->early_syncs;
    t->probe_errors += r->probe_errors;
    t->cancel_errors += r->cancel_errors;
    t->credit_rndv += r->credit_rndv;
    t->over_window += r->over_window;
    t->byes_sent += r->byes_sent;
    t->byes_taken += r->byes_taken;
    t->leave_timeouts += r->leave_timeouts;
    t->left_failures += r->left_failures;
    t->kills += r->kills;
    t->failed_errors += r->failed_errors;
    t->pending_reposts += r->pending_reposts;
    t->ops += r->ops;
    t->engines += (uint64_t)sc->ranks;
    t->mem_bytes += r->mem_bytes * (uint64_t)sc->ranks;
    t->mem_per_peer = r->mem_per_peer;
    t->grown_bytes += r->grown_bytes;
    for (int k = 0; k < BFO_MAX_RAILS; k++)
        t->rail_bytes[k] += r->rail_bytes[k];
    if (r->passed) {
        t->passed++;
        return;
    }
    t->failed++;
    if (t->shown++ >= 20)
        return;
    char replay[2048], faults[512] = "";
    replay_str(sc, replay, sizeof replay);
    for (int i = 0; i < sc->nfaults; i++) {
        size_t n = strlen(faults);
        if (i)
            faults[n++] = ' ';
        fault_str(&sc->faults[i], faults + n, sizeof faults - n);
    }
    if (json)
        fprintf(t->failures, "%s{\"seed\":%" PRIu64 ",\"faults\":\"%s\",\"why\":\"%s\",\"replay\":\"%s\"}",
                t->shown > 1 ? "," : "", sc->seed, faults, r->why, replay);
    else
        fprintf(t->failures, "FAILED: %s\n  replay: %s\n", r->why, replay);
}

/* --mem: the engines' blocks, each mapped on its own (fresh pages, no huge
 * ones), and at the end what of each was touched: its pages resident
 * (read or written; mincore) when the world lets it go. */
typedef struct sim_mem {
    uint64_t blocks, bytes, touched;
} sim_mem;

static void *mem_map(void *ctx, size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    (void)ctx;
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_NOHUGEPAGE
    madvise(p, bytes, MADV_NOHUGEPAGE); /* a huge page would count 2 MiB for a byte */
#endif
    return p;
}

static void mem_unmap(void *ctx, void *p, size_t bytes)
{
    sim_mem *m = (sim_mem *)ctx;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = (bytes + page - 1) / page;
    unsigned char *vec = (unsigned char *)malloc(pages ? pages : 1);
    if (vec && mincore(p, bytes, vec) == 0)
        for (size_t i = 0; i < pages; i++)
            m->touched += (vec[i] & 1) ? (i + 1 == pages ? bytes - i * page : page) : 0;
    free(vec);
    m->blocks++;
    m->bytes += bytes;
    munmap(p, bytes);
}

static void run_one(totals *t, sr_scenario *sc, const options *o)
{
    sr_result r;
    sr_run(sc, &r);
    account(t, sc, &r, o->json);
}

static void explore_single(totals *t, const sr_scenario *base, const options *o)
{
    static const int kinds[] = { SN_LOSE, SN_DELIVER_ERROR, SN_DELAY };
    sr_result r;
    sr_scenario sc = *base;
    sr_run(&sc, &r); /* how many operations it posts */
    account(t, &sc, &r, o->json);
    for (uint64_t op = 1; op <= r.ops; op++) {
        for (int k = 0; k < 3; k++) {
            sc = *base;
            sc.nfaults = 1;
            memset(&sc.faults[0], 0, sizeof sc.faults[0]);
            sc.faults[0].what = SN_FAULT_TYPE;
            sc.faults[0].n = op;
            sc.faults[0].kind = kinds[k];
            sc.seed = base->seed * 1000003 + op * 3 + (uint64_t)k;
            run_one(t, &sc, o);
        }
        for (int rail = 0; rail < base->rails; rail++) {
            sc = *base;
            sc.nfaults = 1;
            memset(&sc.faults[0], 0, sizeof sc.faults[0]);
            sc.faults[0].what = SN_FAULT_RAIL_DOWN;
            sc.faults[0].rail = rail;
            sc.faults[0].n = op;
            sc.seed = base->seed * 1000003 + op * 7 + (uint64_t)rail;
            run_one(t, &sc, o);
        }
        /* the rail drops in silence from here on: every way, or 0 -> 1 only */
        for (int rail = 0; rail < base->rails; rail++)
            for (int one_way = 0; one_way < 2; one_way++) {
                sc = *base;
                sc.nfaults = 1;
                memset(&sc.faults[0], 0, sizeof sc.faults[0]);
                sc.faults[0].what = SN_FAULT_PATH;
                sc.faults[0].kind = SN_PATH_SILENT;
                sc.faults[0].rail = rail;
                sc.faults[0].to = one_way;
                sc.faults[0].n = op;
                sc.seed = base->seed * 1000003 + op * 11 + (uint64_t)(2 * rail + one_way);
                run_one(t, &sc, o);
            }
    }
}

static void explore_double(totals *t, const sr_scenario *base, const options *o)
{
    static const int kinds[] = { SN_LOSE, SN_DELIVER_ERROR, SN_DELAY };
    sr_result r;
    sr_scenario sc = *base;
    sr_run(&sc, &r);
    account(t, &sc, &r, o->json);
    uint64_t n = r.ops < 40 ? r.ops : 40;
    for (uint64_t a = 1; a <= n; a++)
        for (uint64_t b = a + 1; b <= n + 10; b++)
            for (int ka = 0; ka < 3; ka++)
                for (int kb = 0; kb < 3; kb++) {
                    sc = *base;
                    sc.nfaults = 2;
                    memset(sc.faults, 0, 2 * sizeof sc.faults[0]);
                    sc.faults[0].what = sc.faults[1].what = SN_FAULT_TYPE;
                    sc.faults[0].n = a;
                    sc.faults[0].kind = kinds[ka];
                    sc.faults[1].n = b;
                    sc.faults[1].kind = kinds[kb];
                    sc.seed = a * 131 + b * 17 + (uint64_t)(ka * 3 + kb);
                    run_one(t, &sc, o);
                }
}

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* The fragment types of requests, in code order: those whose events the
 * send or the receive machine has a transition for (rail control is the
 * rail faults' part).  Read from the alphabet and the machines, so a new
 * type is among them as soon as a grammar takes it. */
static int request_types(int *types)
{
    int n = 0;
    for (int t = 1; t < 256; t++) {
        int req = 0;
        for (int k = BFO_EVK_RCVD; k <= BFO_EVK_FAILED && !req; k++) {
            int ev = bfo_frag_event(t, k);
            for (int s = 1; ev && s < BFO_SEND_NUM_STATES && !req; s++)
                req = bfo_send_accepts(s, ev);
            for (int s = 1; ev && s < BFO_RECV_NUM_STATES && !req; s++)
                req = bfo_recv_accepts(s, ev);
        }
        if (req)
            types[n++] = t;
    }
    return n;
}

static void random_runs(totals *t, const sr_scenario *set, int nset, const options *o)
{
    uint64_t x = o->seed * 0x9e3779b97f4a7c15ull + 12345;
    int types[256];
    const uint64_t ntypes = (uint64_t)request_types(types);
    for (int i = 0; i < o->random_n; i++) {
        sr_scenario sc = set[rnd(&x) % (uint64_t)nset];
        sc.seed = rnd(&x);
        sc.nfaults = 1 + (int)(rnd(&x) % 3);
        for (int k = 0; k < sc.nfaults; k++) {
            sn_fault *f = &sc.faults[k];
            memset(f, 0, sizeof *f);
            f->n = 1 + rnd(&x) % 40;
            if (rnd(&x) % 5 == 0) {
                f->what = SN_FAULT_RAIL_DOWN;
                f->rail = (int)(rnd(&x) % (uint64_t)sc.rails);
                if (rnd(&x) & 1 && sc.nfaults < SN_MAX_FAULTS) { /* and back later */
                    sn_fault *u = &sc.faults[sc.nfaults++];
                    *u = *f;
                    u->what = SN_FAULT_RAIL_UP;
                    u->n = f->n + 1 + rnd(&x) % 20;
                }
            } else {
                f->what = SN_FAULT_TYPE;
                uint64_t t = rnd(&x) % (ntypes + 2); /* a request's fragment type, WRITE, READ */
                f->type = (rnd(&x) & 1) ? 0
                          : t < ntypes  ? types[t]
                          : t == ntypes ? SN_TYPE_WRITE
                                        : SN_TYPE_READ;
                f->kind = 1 + (int)(rnd(&x) % 3);
            }
        }
        if (o->kill_mode == 2) {
            sc.kill = 1 + (int)(rnd(&x) % (uint64_t)sc.ranks);
            sc.kill_op = 1 + rnd(&x) % 60; /* at a random step: a scenario takes tens */
            sc.report_ns = rnd(&x) % 21 * 1000000ull;
        }
        run_one(t, &sc, o);
    }
}

/* Every rank killed at every step of the scenario: once the network carried
 * k operations, for every k it takes without a kill until every request is
 * complete; reported dead 0 or 5 ms later (alternately). */
static void explore_kill(totals *t, const sr_scenario *base, const options *o)
{
    sr_result r;
    sr_scenario sc = *base;
    sc.kill = 0;
    sr_run(&sc, &r); /* how many operations it takes */
    account(t, &sc, &r, o->json);
    for (uint64_t op = 1; op <= r.ops_to_done; op++)
        for (int v = 0; v < base->ranks; v++) {
            sc = *base;
            sc.kill = v + 1;
            sc.kill_op = op;
            sc.report_ns = (op + (uint64_t)v) % 2 ? 5000000ull : 0;
            sc.seed = base->seed * 1000003 + op * 7 + (uint64_t)v;
            run_one(t, &sc, o);
        }
}

/* --explore cut (relay on, 3 ranks or more): every pair of ranks cut (every
 * rail silent both ways) at every step; every other step the cut heals 40
 * operations later.  A third rank reaches both ends, so every message must
 * arrive (sr_scenario.relay_strict). */
static void explore_cut(totals *t, const sr_scenario *base, const options *o)
{
    sr_result r;
    sr_scenario sc = *base;
    sr_run(&sc, &r); /* how many operations it takes */
    account(t, &sc, &r, o->json);
    for (uint64_t op = 1; op <= r.ops_to_done; op++)
        for (int a = 0; a < base->ranks; a++)
            for (int b = a + 1; b < base->ranks; b++) {
                int heal = op % 2 == 0;
                sc = *base;
                sc.relay = 1;
                sc.relay_strict = 1;
                sc.nfaults = 0;
                for (int rail = 0; rail < base->rails; rail++)
                    for (int d = 0; d < (heal ? 4 : 2) && sc.nfaults < SN_MAX_FAULTS; d++) {
                        sn_fault *f = &sc.faults[sc.nfaults++];
                        memset(f, 0, sizeof *f);
                        f->what = SN_FAULT_PATH;
                        f->rail = rail;
                        f->n = d < 2 ? op : op + 40;
                        f->kind = d < 2 ? SN_PATH_SILENT : SN_PATH_OPEN;
                        f->from = d % 2 ? b : a;
                        f->to = d % 2 ? a : b;
                    }
                sc.seed = base->seed * 1000003 + op * 11 + (uint64_t)(a * 3 + b);
                run_one(t, &sc, o);
            }
}

static int cmd_sim(int argc, char **argv)
{
    options o;
#ifdef __GLIBC__
    /* Every scenario allocates its world and frees it: glibc gave the top
     * of the heap back to the kernel each time (3 brk calls a scenario),
     * and the next one faulted every page in again, zeroed: half of an
     * exploration's time was the kernel's.  Kept, they are reused. */
    mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
    mallopt(M_MMAP_THRESHOLD, 64 * 1024 * 1024);
#endif
    memset(&o, 0, sizeof o);
    o.ranks = 2;
    o.rails = 2;
    o.seed = 1;
    o.data_rails = 1; /* --data: rail 0 reads in place, the others leave it to the engine */
    o.progress_us = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG() if (!v) die("missing value for", a); i++
        if (!strcmp(a, "--ranks")) { NEED_ARG(); o.ranks = atoi(v); }
        else if (!strcmp(a, "--rails")) { NEED_ARG(); o.rails = atoi(v); }
        else if (!strcmp(a, "--seed")) { NEED_ARG(); o.seed = strtoull(v, NULL, 10); }
        else if (!strcmp(a, "--rail-bw")) {
            NEED_ARG();
            const char *p = v;
            for (int k = 0; *p && k < BFO_MAX_RAILS; k++) {
                char *e;
                o.bw[k] = (unsigned)strtoul(p, &e, 10);
                p = *e == ',' ? e + 1 : e;
            }
        } else if (!strcmp(a, "--protocol")) {
            NEED_ARG();
            if (!strcmp(v, "auto")) o.protocol = SR_P_AUTO;
            else if (!strcmp(v, "eager")) o.protocol = SR_P_EAGER;
            else if (!strcmp(v, "copy")) o.protocol = SR_P_COPY;
            else if (!strcmp(v, "put")) o.protocol = SR_P_PUT;
            else if (!strcmp(v, "get")) o.protocol = SR_P_GET;
            else die("unknown protocol", v);
        } else if (!strcmp(a, "--rdma-rails")) {
            NEED_ARG();
            unsigned can = 0;
            for (const char *p = strcmp(v, "none") ? v : ""; *p;) {
                char *e;
                long k = strtol(p, &e, 10);
                if (e == p || k < 0 || k >= BFO_MAX_RAILS)
                    die("--rdma-rails wants rail numbers", v);
                can |= 1u << k;
                p = *e == ',' ? e + 1 : e;
                if (*e && *e != ',')
                    die("--rdma-rails wants rail numbers", v);
            }
            o.plain_rails = ~can & ((1u << BFO_MAX_RAILS) - 1);
        } else if (!strcmp(a, "--data")) {
            NEED_ARG();
            o.data = -1;
            for (int k = 1; k < 4; k++)
                if (!strcmp(v, data_names[k]))
                    o.data = k;
            if (o.data < 0)
                die("--data wants iov, pack or mixed", v);
        } else if (!strcmp(a, "--data-rails")) {
            NEED_ARG();
            o.data_rails = parse_rails("--data-rails wants rail numbers", v);
        } else if (!strcmp(a, "--msg")) {
            NEED_ARG();
            if (o.nmsgs == SR_MAX_MSGS) die("too many --msg", v);
            o.msgs[o.nmsgs] = parse_msg(v);
            if (o.msgs[o.nmsgs].tag == -2)
                o.msgs[o.nmsgs].tag = o.nmsgs;
            o.nmsgs++;
        } else if (!strcmp(a, "--fault")) {
            NEED_ARG();
            if (o.nfaults == SN_MAX_FAULTS) die("too many --fault", v);
            o.faults[o.nfaults] = parse_fault(v);
            o.nfaults++;
        } else if (!strcmp(a, "--explore")) {
            NEED_ARG();
            if (!strcmp(v, "single")) o.explore = 1;
            else if (!strcmp(v, "double")) o.explore = 2;
            else if (!strcmp(v, "kill")) o.explore = 3;
            else if (!strcmp(v, "cut")) o.explore = 4;
            else die("--explore wants single, double, kill or cut", v);
        } else if (!strcmp(a, "--random")) { NEED_ARG(); o.random_n = atoi(v); }
        else if (!strcmp(a, "--trace")) o.trace = 1;
        else if (!strcmp(a, "--seq-start")) { NEED_ARG(); o.seq_start = strtoull(v, NULL, 10); }
        else if (!strcmp(a, "--budget")) {
            const char *end;
            NEED_ARG();
            o.budget = parse_size(v, &end);
            if (*end || !o.budget) die("--budget wants a size (4096, 4K, 1M)", v);
        }
        else if (!strcmp(a, "--start-ms")) { NEED_ARG(); o.start_ns = strtoull(v, NULL, 10) * 1000000ull; }
        else if (!strcmp(a, "--leave")) o.leave = 1;
        else if (!strcmp(a, "--kill")) {
            NEED_ARG();
            if (!strcmp(v, "random")) {
                o.kill_mode = 2;
            } else {
                char *end;
                unsigned long long at = 0, rep_ms = 5;
                o.kill_rank = (int)strtol(v, &end, 10);
                if (end == v || *end != '@')
                    die("--kill wants R@MS[+MS], R@opN[+MS] or random", v);
                if (!strncmp(end + 1, "op", 2)) {
                    o.kill_op = strtoull(end + 3, &end, 10);
                    if (!o.kill_op)
                        die("--kill R@opN: N is 1 or more", v);
                } else {
                    at = strtoull(end + 1, &end, 10);
                }
                if (*end == '+')
                    rep_ms = strtoull(end + 1, &end, 10);
                if (*end)
                    die("--kill wants R@MS[+MS], R@opN[+MS] or random", v);
                o.kill_mode = 1;
                o.kill_at_ns = at * 1000000ull;
                o.report_ns = rep_ms * 1000000ull;
            }
        }
        else if (!strcmp(a, "--place")) o.place = 1;
        else if (!strcmp(a, "--relay")) o.relay = 1;
        else if (!strcmp(a, "--cut")) {
            int ca, cb;
            unsigned long long cn, cm = 0;
            char tail[8] = "";
            NEED_ARG();
            if (sscanf(v, "%d-%d@%llu-%llu%7s", &ca, &cb, &cn, &cm, tail) < 3 || tail[0] || ca == cb ||
                ca < 0 || cb < 0 || !cn || (cm && cm <= cn)) /* within --ranks: below */
                die("--cut wants A-B@N or A-B@N-M (M > N), two ranks", v);
            for (int r = 0; r < o.rails; r++)
                for (int d = 0; d < 2 * (cm ? 2 : 1); d++) {
                    sn_fault *f;
                    if (o.nfaults == SN_MAX_FAULTS) die("--cut: too many faults (16 at most)", v);
                    f = &o.faults[o.nfaults++];
                    memset(f, 0, sizeof *f);
                    f->what = SN_FAULT_PATH;
                    f->rail = r;
                    f->n = d < 2 ? cn : cm;
                    f->kind = d < 2 ? SN_PATH_SILENT : SN_PATH_OPEN;
                    f->from = d % 2 ? cb : ca;
                    f->to = d % 2 ? ca : cb;
                }
            o.cut = 1;
        }
        else if (!strcmp(a, "--exchange")) {
            char *e;
            NEED_ARG();
            o.exchange = (int)strtol(v, &e, 10);
            o.exchange_size = 1024;
            if (*e == ':') {
                const char *end;
                o.exchange_size = parse_size(e + 1, &end);
                e = (char *)(uintptr_t)end;
            }
            if (e == v || *e || o.exchange < 1)
                die("--exchange wants K[:SIZE], K from 1", v);
        }
        else if (!strcmp(a, "--grow")) o.grow = 1;
        else if (!strcmp(a, "--progress-us")) {
            char *e;
            NEED_ARG();
            o.progress_us = strtoll(v, &e, 10);
            if (e == v || *e || o.progress_us < 0)
                die("--progress-us wants a number of microseconds", v);
        }
        else if (!strcmp(a, "--mem")) o.mem = 1;
        else if (!strcmp(a, "--leave-gap")) { NEED_ARG(); o.leave_gap_ns = strtoull(v, NULL, 10) * 1000000ull; }
        else if (!strcmp(a, "--json")) o.json = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) { print_usage(stdout); return 0; }
        else die("unknown option", a);
#undef NEED_ARG
    }
    if (o.ranks < 2 || o.ranks > SIM_MAX_RANKS)
        die("--ranks is 2..4096", "");
    if (o.exchange && o.nmsgs)
        die("--exchange makes the messages: no --msg with it", "");
    if (o.exchange > sr_exchange_max(o.ranks))
        die("--exchange K: K peers at most log2 of --ranks, rounded up", "");
    if (o.progress_us < 0) /* up to 8 ranks every engine's after every step, as always */
        o.progress_us = o.ranks > SIM_EXACT_RANKS ? 10000 : 0;
    if (o.rails < 1 || o.rails > BFO_MAX_RAILS)
        die("--rails is 1..8", "");
    if (o.kill_mode && o.leave)
        die("--kill and --leave go apart: a killed rank says no goodbye", "");
    if (o.kill_mode == 1 && (o.kill_rank < 0 || o.kill_rank >= o.ranks))
        die("--kill names a rank outside --ranks", "");
    if (o.kill_mode == 2 && !o.random_n)
        die("--kill random goes with --random N", "");
    if (o.explore == 3 && (o.kill_mode || o.leave))
        die("--explore kill chooses the kills itself (no --kill, no --leave)", "");
    for (int i = 0; i < o.nmsgs; i++)
        if (o.msgs[i].src < 0 || o.msgs[i].src >= o.ranks || o.msgs[i].dst < 0 ||
            o.msgs[i].dst >= o.ranks)
            die("--msg names a rank outside --ranks", "");
    for (int i = 0; i < o.nfaults; i++)
        if ((o.faults[i].what != SN_FAULT_TYPE && o.faults[i].rail >= o.rails) ||
            (o.faults[i].what == SN_FAULT_PATH &&
             (o.faults[i].from >= o.ranks || o.faults[i].to >= o.ranks)))
            die("a rail fault names a rail outside --rails or a rank outside --ranks", "");

    /* the scenarios: the one given, or the standard set */
    static sr_scenario set[32];
    sim_mem mem;
    memset(&mem, 0, sizeof mem);
    int nset;
    if (o.nmsgs || o.exchange) {
        sr_scenario *sc = &set[0];
        memset(sc, 0, sizeof *sc);
        sc->ranks = o.ranks;
        sc->rails = o.rails;
        sc->nmsgs = o.nmsgs;
        memcpy(sc->msgs, o.msgs, sizeof o.msgs);
        sc->exchange = o.exchange;
        sc->exchange_size = o.exchange_size;
        nset = 1;
    } else {
        nset = sr_standard_set(set, 32);
        if (o.ranks != 2 || o.rails != 2) { /* the standard messages, given shape */
            for (int i = 0; i < nset; i++) {
                set[i].ranks = o.ranks;
                if (o.rails != 2)
                    set[i].rails = o.rails;
            }
        }
    }
    for (int i = 0; i < nset; i++) {
        if (o.nmsgs || o.exchange || o.protocol != SR_P_AUTO)
            sr_set_protocol(&set[i], o.protocol);
        if (o.plain_rails)
            set[i].plain_rails = o.plain_rails;
        set[i].data = o.data;
        set[i].data_rails = o.data_rails;
        for (int k = 0; k < BFO_MAX_RAILS; k++)
            set[i].rail_bw[k] = o.bw[k];
        if (!o.explore && !o.random_n) {
            set[i].nfaults = o.nfaults;
            memcpy(set[i].faults, o.faults, sizeof o.faults);
            set[i].seed = o.seed + (uint64_t)i;
        }
        set[i].trace = o.trace ? stdout : NULL;
        set[i].start_ns = o.start_ns;
        set[i].connect_at_init = o.start_ns != 0; /* rails up before the messages: asked at
                                                   * init (else first use: the first send) */
        set[i].seq_start = o.seq_start;
        set[i].unexpected_budget = o.budget;
        set[i].leave = o.leave;
        set[i].leave_gap_ns = o.leave_gap_ns;
        set[i].place = o.place;
        set[i].grow = o.grow;
        set[i].progress_ns = (uint64_t)o.progress_us * 1000u;
        if (o.mem) {
            set[i].mem_alloc = mem_map;
            set[i].mem_free = mem_unmap;
            set[i].mem_ctx = &mem;
        }
        set[i].relay = o.relay;
        set[i].relay_strict = o.relay && o.cut && !o.explore && !o.random_n; /* the cut alone */
        if (o.kill_mode == 1) {
            set[i].kill = o.kill_rank + 1;
            set[i].kill_at_ns = o.kill_at_ns;
            set[i].kill_op = o.kill_op;
            set[i].report_ns = o.report_ns;
        }
    }

    totals t;
    char *fbuf = NULL;
    size_t flen = 0;
    struct timespec t0, t1;
    memset(&t, 0, sizeof t);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    t.failures = open_memstream(&fbuf, &flen);
    if (o.explore == 1)
        for (int i = 0; i < nset; i++)
            explore_single(&t, &set[i], &o);
    else if (o.explore == 2)
        for (int i = 0; i < nset; i++)
            explore_double(&t, &set[i], &o);
    else if (o.explore == 3)
        for (int i = 0; i < nset; i++)
            explore_kill(&t, &set[i], &o);
    else if (o.explore == 4)
        for (int i = 0; i < nset; i++)
            explore_cut(&t, &set[i], &o);
    if (o.random_n)
        random_runs(&t, set, nset, &o);
    if (!o.explore && !o.random_n)
        for (int i = 0; i < nset; i++)
            run_one(&t, &set[i], &o);
    fclose(t.failures);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* --mem: means over every engine of every scenario run */
    char memline[400] = "";
    if (o.mem)
        snprintf(memline, sizeof memline,
                 "ranks=%d rails=%d messages=%" PRIu64 " scenarios=%" PRIu64 " ops=%" PRIu64
                 " block=%" PRIu64 " per_peer=%" PRIu64 " touched=%" PRIu64 " grown=%" PRIu64
                 " progress_us=%lld seconds=%.2f",
                 o.ranks, o.rails, t.delivered + t.errored + t.hung, t.scenarios,
                 t.scenarios ? t.ops / t.scenarios : 0, t.engines ? t.mem_bytes / t.engines : 0,
                 t.mem_per_peer, mem.blocks ? mem.touched / mem.blocks : 0,
                 t.engines ? t.grown_bytes / t.engines : 0, o.progress_us,
                 (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);

    if (o.json) {
        printf("{\"scenarios\":%" PRIu64 ",\"passed\":%" PRIu64 ",\"failed\":%" PRIu64
               ",\"delivered\":%" PRIu64 ",\"errored\":%" PRIu64 ",\"lost\":%" PRIu64
               ",\"duplicates\":%" PRIu64
               ",\"corrupt\":%" PRIu64 ",\"hung\":%" PRIu64 ",\"leaked\":%" PRIu64
               ",\"unreachable_errors\":%" PRIu64 ",\"restarts\":%" PRIu64 ",\"mapouts\":%" PRIu64
               ",\"readmissions\":%" PRIu64 ",\"protocols\":{\"eager\":%" PRIu64
               ",\"copy\":%" PRIu64 ",\"put\":%" PRIu64 ",\"get\":%" PRIu64 "},\"rdma_ops\":%" PRIu64
               ",\"cancelled\":%" PRIu64 ",\"early_syncs\":%" PRIu64 ",\"probe_errors\":%" PRIu64
               ",\"cancel_errors\":%" PRIu64 ",\"credit_rndv\":%" PRIu64
               ",\"over_window\":%" PRIu64 ",\"byes_sent\":%" PRIu64 ",\"byes_taken\":%" PRIu64
               ",\"leave_timeouts\":%" PRIu64 ",\"left_failures\":%" PRIu64
               ",\"kills\":%" PRIu64 ",\"failed_errors\":%" PRIu64 ",\"pending_reposts\":%" PRIu64
               ",\"relayed_frames\":%" PRIu64 ",\"relay_passed\":%" PRIu64 ",\"relay_refused\":%" PRIu64
               ",\"routes_found\":%" PRIu64 ",\"routes_lost\":%" PRIu64
               "%s%s%s,\"failures\":[%s]}\n",
               t.scenarios, t.passed, t.failed, t.delivered, t.errored, t.lost, t.duplicates, t.corrupt, t.hung,
               t.leaked, t.unreachable_errors, t.restarts, t.mapouts, t.readmissions, t.eagers,
               t.copies, t.puts, t.gets, t.rdma_ops, t.cancelled, t.early_syncs, t.probe_errors,
               t.cancel_errors, t.credit_rndv, t.over_window, t.byes_sent, t.byes_taken,
               t.leave_timeouts, t.left_failures, t.kills, t.failed_errors, t.pending_reposts,
               t.relayed_frames, t.relay_passed, t.relay_refused, t.routes_found, t.routes_lost,
               o.mem ? ",\"mem\":\"" : "", memline, o.mem ? "\"" : "", fbuf ? fbuf : "");
    } else {
        if (fbuf && flen)
            fputs(fbuf, stdout);
        printf("scenarios %" PRIu64 ": delivered %" PRIu64 ", errored %" PRIu64 ", lost %" PRIu64
               ", duplicates %" PRIu64
               ", corrupt %" PRIu64 ", hung %" PRIu64 ", leaked %" PRIu64 ", unreachable errors %" PRIu64
               ", restarts %" PRIu64 ", map-outs %" PRIu64 ", re-admissions %" PRIu64 "\n",
               t.scenarios, t.delivered, t.errored, t.lost, t.duplicates, t.corrupt, t.hung, t.leaked,
               t.unreachable_errors, t.restarts, t.mapouts, t.readmissions);
        printf("protocols taken: eager %" PRIu64 ", copy %" PRIu64 ", put %" PRIu64 ", get %" PRIu64
               "; RDMA operations %" PRIu64 "; bytes per rail",
               t.eagers, t.copies, t.puts, t.gets, t.rdma_ops);
        for (int k = 0; k < o.rails; k++)
            printf(" %" PRIu64, t.rail_bytes[k]);
        putchar('\n');
        if (t.cancelled || t.early_syncs || t.probe_errors || t.cancel_errors)
            printf("MPI's cases: cancelled %" PRIu64 ", synchronous sends complete before their "
                   "match %" PRIu64 ", probe errors %" PRIu64 ", cancel errors %" PRIu64 "\n",
                   t.cancelled, t.early_syncs, t.probe_errors, t.cancel_errors);
        if (o.budget || t.credit_rndv || t.over_window)
            printf("credits: sends of eager size by rendezvous for want of credit %" PRIu64
                   ", frames past a window %" PRIu64 "\n",
                   t.credit_rndv, t.over_window);
        if (o.leave)
            printf("goodbyes: BYEs sent %" PRIu64 ", taken by %" PRIu64 " peers; ranks whose BYEs "
                   "were not out in time %" PRIu64 "; rails failed after a BYE %" PRIu64 "\n",
                   t.byes_sent, t.byes_taken, t.leave_timeouts, t.left_failures);
        if (o.kill_mode || o.explore == 3)
            printf("process deaths: ranks killed %" PRIu64 ", requests ended PROC_FAILED or _PENDING %" PRIu64
                   ", ANY_SOURCE receives acknowledged and posted again %" PRIu64 "\n",
                   t.kills, t.failed_errors, t.pending_reposts);
        if (o.relay)
            printf("relay: frames sent through a third rank %" PRIu64 ", passed on %" PRIu64
                   ", refused %" PRIu64 "; routes found %" PRIu64 ", lost %" PRIu64 "\n",
                   t.relayed_frames, t.relay_passed, t.relay_refused, t.routes_found, t.routes_lost);
        if (o.mem)
            printf("sim-mem %s\n", memline);
        printf("sim: %" PRIu64 " passed, %" PRIu64 " failed\n", t.passed, t.failed);
    }
    free(fbuf);
    return t.failed ? 1 : 0;
}

/* tools/bfo_tcp_cmds.c: processes over the TCP backend */
int bfo_cmd_run(int argc, char **argv);
int bfo_cmd_stream(int argc, char **argv);
int bfo_cmd_demo(int argc, char **argv); /* tools/bfo_demo.c */
int bfo_cmd_bench(int argc, char **argv);
int bfo_cmd_agree_sim(int argc, char **argv); /* tools/bfo_agree.c */
int bfo_cmd_relay_bench(int argc, char **argv); /* tools/bfo_relaybench.c */
int bfo_cmd_raw_stream(int argc, char **argv); /* tools/bfo_rawstream.c */

/* bfo abi: BFO_ABI_HERE of this build, which the archives share (the
 * Makefile compiles both with the same layout options); make check-install
 * compares a program built through pkg-config with it. */
static int cmd_abi(void)
{
    const bfo_abi *a = BFO_ABI_HERE;
    printf("version %u\nmax_rails %u\nmax_actions %u\nsizeof_engine %u\nsizeof_peer %u\n"
           "sizeof_stats %u\nsizeof_request %u\nsizeof_config %u\nsizeof_backend %u\n"
           "sizeof_step %u\n",
           (unsigned)a->version, (unsigned)a->max_rails, (unsigned)a->max_actions,
           (unsigned)a->sizeof_engine, (unsigned)a->sizeof_peer, (unsigned)a->sizeof_stats,
           (unsigned)a->sizeof_request, (unsigned)a->sizeof_config, (unsigned)a->sizeof_backend,
           (unsigned)a->sizeof_step);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "sim"))
        return cmd_sim(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "agree-sim"))
        return bfo_cmd_agree_sim(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "relay-bench"))
        return bfo_cmd_relay_bench(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "raw-stream"))
        return bfo_cmd_raw_stream(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "run"))
        return bfo_cmd_run(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "stream"))
        return bfo_cmd_stream(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "demo"))
        return bfo_cmd_demo(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "bench"))
        return bfo_cmd_bench(argc - 1, argv + 1);
    if (argc == 2 && !strcmp(argv[1], "abi"))
        return cmd_abi();
    fprintf(stderr, "usage: bfo sim [options]                       the engine under the simulator\n"
                    "       bfo agree-sim [options]                 groups' agreements under process deaths\n"
                    "       bfo relay-bench [options]               a relay against the direct rails (3 ranks)\n"
                    "       bfo run -n N [--rails A,B] -- PROGRAM ARGS  N local processes, wired up\n"
                    "       bfo stream [options]                    verified streams between ranks\n"
                    "       bfo demo                                a stream living through two rail faults\n"
                    "       bfo bench [--sizes LIST] [--baseline]    latency and bandwidth, against raw TCP\n"
                    "       bfo raw-stream [options]                raw TCP connections both ways, the baseline of a stream\n"
                    "       bfo abi                                 the layout this bfo was built with (bfo_abi)\n"
                    "       (bfo COMMAND --help for options)\n");
    return 2;
}
