// SPDX-License-Identifier: BSD-3-Clause
/* bfo_tcp_cmds.c - `bfo run` (a local launcher) and `bfo stream` (a verified
 * all-pairs stream over the TCP backend).
 *
 *   bfo run -n N [--rails A,B,...] [--timeout SEC] [--keep-going]
 *           [--pidfile FILE] [--bootstrap ADDR:PORT]
 *           [--set TRANSPORT.NAME=VALUE]... -- PROGRAM ARGS...
 *   bfo run --settings
 *     Forks N processes of PROGRAM with BFO_RANK, BFO_SIZE, BFO_BOOTSTRAP
 *     (127.0.0.1 and a port the kernel picks, unless given: bound and
 *     listening here before any rank starts, the socket handed to rank 0
 *     as BFO_BOOTSTRAP_FD), BFO_AUTH_FD (a pipe holding the job's fresh
 *     membership key) and BFO_RAILS (when --rails is given; else
 *     inherited).  Waits for all.  When one dies abnormally
 *     (signal or non-zero exit) the others are killed, unless --keep-going:
 *     then the others go on and are told, each on its own pipe
 *     (BFO_LAUNCHER_FD: one line "failed R"), and bfo_net declares R dead
 *     (BFO_ERR_PROC_FAILED, docs/failure-model.md).  A rank that exits 0
 *     is no failure (it left, or will be found unreachable).
 *     --timeout: kill everything after SEC seconds (exit 124).  --pidfile:
 *     "RANK PID" lines, for tests that signal or kill one rank.  --set:
 *     a transport's setting (TRANSPORT * : every transport that has NAME),
 *     checked here by the transport's table and given to every rank as
 *     BFO_<TRANSPORT>_<NAME>; --settings lists every transport's table
 *     (name, type, default, range, same on every rank, variable, help).
 *     At the end
 *     one line per rank on stderr ("bfo run: rank 1 pid 123: exit 0" or
 *     "...: signal 9").  Exit 0 only if every rank exited 0.
 *
 *   bfo stream [--size S | --sizes S1,S2,...] [--count N | --duration SEC] [--window W] [--json]
 *              [--tolerate-death] [--skip-rank R]... [--drop-on-signal RAIL] [--recv-delay-ms T]
 *              [--send-delay-ms T] [--recv-first]
 *              [--heartbeat-ms T] [--silence-ms T] [--probe-timeout-ms T]
 *              [--grace-ms T] [--user-timeout-ms T] [--connect-timeout-ms T]
 *              [--timeout SEC] [-v] [--trace-rails] [--linger R:MS[:sleep]]
 *              [--beacon-ms T|off] [--notsent-lowat BYTES|off]
 *     Run under `bfo run`.  Every ordered pair of ranks (src, dst) carries
 *     N messages (default 100) with sizes cycling through the list (default
 *     64,1000,4096,65536,300000,1048576: eager and rendezvous); byte k of
 *     message i is a function of (src, dst, i, k) and every byte is checked.
 *     W messages in flight per peer and direction (default 8).
 *     --duration SEC: send for SEC seconds instead of a fixed count (--count
 *       is then the cap, default 1000000); each sender ends with a TOTAL
 *       message naming its count, and the receiver checks against it.
 *     --tolerate-death: a peer that becomes unreachable (killed) is counted,
 *       not a failure; the others go on.
 *     --skip-rank R: rank R takes no part (it runs something else, e.g. a
 *       misbehaving test peer); the others do not stream with it.
 *     --recv-delay-ms T: post no receive for the first T ms (the senders'
 *       eager messages fill the engine's unexpected buffers: back-pressure).
 *     --recv-first: every receive posted before any message is sent: the
 *       window is the count; a rank posts all its receives, then tells
 *       each peer so (a READY message, context 1), and sends to a peer only
 *       once that peer's READY came (--count only, not --duration).
 *     --trace-rails: every rail state change on stderr (ms since the
 *       first, CLOCK_MONOTONIC seconds in parentheses, peer, rail, from
 *       --event--> to), and how long a mapped-out rail's operations in
 *       flight took to fail.
 *     --set TRANSPORT.NAME=VALUE: a transport's setting, by its table
 *       (bfo_setting.h; `bfo run --settings` lists them); a bad value is
 *       refused (exit 2).  The older flags are names for settings:
 *       --beacon-ms T|off tcp.beacon_ms, --notsent-lowat BYTES|off
 *       tcp.notsent_lowat (0 is off for both), --user-timeout-ms
 *       tcp.user_timeout_ms, --connect-timeout-ms every transport's
 *       connect_timeout_ms, --verbs-timeout verbs.timeout, --verbs-retry
 *       verbs.retry_cnt.  Unset: BFO_<TRANSPORT>_<NAME>, else the
 *       transport's default.
 *     --drop-on-signal RAIL: SIGUSR1 toggles the backend's fault hook
 *       (every frame on RAIL silently lost) in this process.
 *     --compute R:AT:SEC: rank R, AT seconds into the stream, computes for
 *       SEC seconds (a busy loop that makes no call into bfo), as an MPI
 *       rank between two communication phases; the others go on streaming
 *       to it (docs/engine-design.md, "The failure detector").  R `all`:
 *       every rank at once.
 *     --linger R:MS[:sleep]: rank R finishes last: after the end of the
 *       stream it lingers MS ms before it leaves, while the others leave
 *       and exit.  Each of them first sends it a farewell message (context
 *       4) that rank R receives only after lingering (it waits in its
 *       engine meanwhile: a message of a rank that left is still
 *       received).  Rank R then makes sure every other rank said goodbye
 *       (bfo_peer_left), none was mapped out or given up, a send to one
 *       fails at once with BFO_ERR_PEER_LEFT, and says so on stderr
 *       ("bfo stream[R]: lingered ..."); any of it wrong fails it.  With
 *       sleep it lingers asleep, calling nothing of bfo (no farewells
 *       then; 100 ms of progress first, so that what it owes is out): the others' BYEs wait in its sockets and their processes
 *       end at bfo_net_leave's bound; it takes the BYEs when it wakes, before
 *       the connections' ends behind them (a map-out is not checked then: a
 *       rank still streaming when it fell asleep may have timed a probe out).
 *     --json: rank 0 prints ONE object for the whole job (the other ranks
 *       send their counts to rank 0 at the end):
 *       {"ranks","messages","bytes","verified","corrupt","duplicates","lost","errored",
 *        "unreachable","dead_peers","failovers","readmissions",
 *        "recovery_ms_max","stall_ms_max","unreachable_ms_max","failover_ms_max","elapsed_ms",
 *        "conn_errors","malformed_drops","backpressure","keepalives",
 *        "stale_frames","protocol_violations","absent_rails","rdma_reads","rdma_writes",
 *        "host_heard","nudges","thread_rounds","credit_rndv","over_window",
 *        then each transport's own counters by its row's names (TCP:
 *        "placed_frames","placed_dropped","beacons_sent","beacons_rcvd",
 *        "beacons_dropped","writes","reads","ties_won","ties_lost","hello_heard",
 *        "beacon_binds_failed";
 *        bfo_net_counters), then
 *        "demotions","promotions","proc_failed","relayed_frames","relayed_bytes",
 *        "relay_passed","relay_received","routes_found","routes_lost","relay_failed",
 *        "relay_refused","acks",
 *        "per_rail_bytes":[...],"rail_states":[...],
 *        "rail_rates":[...]}
 *       messages/bytes/verified: received at the destinations (delivered);
 *       errored: operations that completed with an error the program saw
 *       (the peer unreachable: the only error a run that passes may see,
 *       with --tolerate-death); lost: messages of a peer still alive (or
 *       dead, without --tolerate-death) that neither arrived nor ended in an
 *       error: delivered to nobody, reported to nobody; a run with one
 *       fails (exit status 1), as with a corrupt or duplicate one; failovers and
 *       readmissions: the engines' mapouts and readmissions; recovery_ms_max:
 *       the longest time from a rail being mapped out to the next message
 *       completion; stall_ms_max: the longest gap between two message
 *       completions; unreachable_ms_max: from a peer's last rail going down
 *       to its requests failing with BFO_ERR_PEER_UNREACHABLE (or
 *       BFO_ERR_PROC_FAILED: the launcher reported it dead, bfo run
 *       --keep-going); proc_failed: operations that ended
 *       BFO_ERR_PROC_FAILED (counted in unreachable and errored too);
 *       relayed_frames, relayed_bytes: frames the ranks sent through a third
 *       rank (BFO_RELAY=1: no rail of their own reached the peer), and
 *       their bytes; relay_passed: frames the ranks passed on for others;
 *       relay_received: frames that came to a rank through a third one;
 *       routes_found, routes_lost: peers that became reached through a
 *       relay, and whose route was lost, all ranks; relay_failed: frames
 *       sent through a relay that completed with an error (sent again, as
 *       any); relay_refused: frames a relay could not pass on (no rail to
 *       their destination, or no slot free): its sender sends them again;
 *       failover_ms_max: the longest time from a rail being mapped out
 *       (leaving UP) with operations in flight to the last of them
 *       completing (failed: free to go out again over the other rails; 0
 *       when the transport had failed them all by the time the stream
 *       looked, as after an error completion); --trace-rails logs each;
 *       per_rail_bytes: engine bytes written per rail, all ranks;
 *       demotions, promotions: rails demoted (slow, or standby) and
 *       promoted again, all ranks (no failovers: a demoted rail works);
 *       rail_states, rail_rates: rank 0's rails to rank 1 at the end, their
 *       state names and the rates the engine measured (MB/s, bfo_rail_rate);
 *       malformed_drops: connections dropped for malformed input (the
 *       transports' count, each logged with its reason); stale_frames: frames
 *       the engines dropped as naming no live request of their sender (or an
 *       older restart), the connection kept; protocol_violations: frames
 *       the engines refused (malformed, impossible in any state, or an event
 *       the request's machine does not take), all ranks; absent_rails:
 *       (rank, peer, rail) whose rail does not reach the peer (ranks with
 *       fewer rails, a shared-memory rail to another host): not failures;
 *       rdma_reads, rdma_writes: the RDMA operations the engines posted
 *       (GET reads, PUT writes), all ranks; host_heard: times a transport
 *       vouched for a silent peer's rail by its host (TCP acknowledgements,
 *       an shm pidfd, a verbs host probe completed by its adapter); nudges:
 *       TCP frames sent only for the peer's kernel to acknowledge, and
 *       verbs host probes (zero-byte RDMA WRITEs) posted; thread_rounds: rounds of bfo_net's progress thread
 *       (BFO_PROGRESS_THREAD=1) while a rank computed; credit_rndv: sends
 *       of eager size that went by rendezvous because the receiver's
 *       window for them was full (BFO_UNEXPECTED_BUDGET / (ranks - 1));
 *       over_window: frames that found the receiver's budget spent and
 *       waited (back-pressure, the safety net; 0 while senders keep to
 *       their windows); placed_frames: TCP FRAGs whose payload was read
 *       straight into the receive's buffer (bfo_engine_place), of which
 *       placed_dropped were dropped (the receive was gone before the end);
 *       beacons_rcvd: TCP beacons taken as the peer heard on a rail, and
 *       beacons_dropped: datagrams on the beacon sockets dropped (another
 *       job's or connection's, a forgery; bfo_tcp.h, BEACONS), all ranks;
 *       writes, reads: TCP send calls that handed bytes to the kernel and
 *       read calls on the connections that returned bytes, all ranks
 *       (TCP's own counters, bfo_rail_stats.tp: a stream striped over two
 *       rails makes about as many as over one, tests/tcp/t21_writes.sh);
 *       acks: TCP standalone acknowledgements sent (acks_tx), all ranks.
 *     With the progress thread on, the stream's engine calls run under
 *       bfo_net_lock (bfo_net.h, THREADS).
 *     At --timeout with messages outstanding: the engine's and transports'
 *       state (bfo_net_dump) and every request not done (its machine's
 *       state, operations outstanding, bytes done) on stderr.
 *     Exit 0 only if every message of every live pair arrived exactly once
 *     with the right bytes (rank 0: for the whole job).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bfo_auth.h"
#include "bfo_boot.h"
#include "bfo_net.h"
#include "bfo_railsel.h"
#include "bfo_tcp.h"

int bfo_cmd_run(int argc, char **argv);
int bfo_cmd_stream(int argc, char **argv);

/* ------------------------------------------------------------------ run */

static volatile sig_atomic_t run_stop;
static void run_on_signal(int sig) { run_stop = sig; }

/* The bootstrap's listening socket, bound and listening before any rank
 * starts (rank 0 inherits it: BFO_BOOTSTRAP_FD), so that no port is left
 * free between its choice and its bind: at addr ("ADDR:PORT"), or on
 * 127.0.0.1 at a port the kernel picks.  Writes "ADDR:PORT" into out;
 * the descriptor (close-on-exec), or -1 said. */
static int bootstrap_listener(const char *addr, int n, char *out, size_t cap)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    uint32_t ip = INADDR_LOOPBACK;
    uint16_t port = 0;
    int s, one = 1;
    if (addr && bfo_boot_parse_hostport(addr, &ip, &port) != 0) {
        fprintf(stderr, "bfo run: --bootstrap %s: not IPV4ADDR:PORT\n", addr);
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(ip);
    sa.sin_port = htons(port);
    s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s >= 0)
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(s, n + 64) != 0 ||
        getsockname(s, (struct sockaddr *)&sa, &sl) != 0) {
        fprintf(stderr, "bfo run: cannot listen for the bootstrap at %s: %s\n", addr ? addr : "127.0.0.1",
                strerror(errno));
        if (s >= 0)
            close(s);
        return -1;
    }
    snprintf(out, cap, "%s:%d", inet_ntoa(sa.sin_addr), ntohs(sa.sin_port));
    return s;
}

/* The job's membership key to one rank: a pipe holding exactly the key,
 * its write end closed (the rank reads it once: BFO_AUTH_FD).  Not the
 * command line nor the environment: a variable is copied into every child
 * the rank starts and into its core dumps.  The read end (close-on-exec),
 * or -1. */
static int key_pipe(const uint8_t *key)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    if (write(p[1], key, BFO_AUTH_KEY_LEN) != BFO_AUTH_KEY_LEN) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    close(p[1]);
    return p[0];
}

static const char run_usage[] =
    "usage: bfo run -n N [--rails VALUE] [--verbose] [--timeout SEC] [--keep-going] [--pidfile FILE]\n"
    "               [--bootstrap ADDR:PORT] [--set TRANSPORT.NAME=VALUE]... -- PROGRAM ARGS...\n"
    "       bfo run --settings   (every transport's settings: what --set takes)\n";

/* ------------------------------------------------ the transports' settings
 *
 * Read from the transports' tables (bfo_net_settings, bfo_setting.h): no
 * transport is named here but in the old flags of bfo stream, each one an
 * alias of a setting. */

/* BFO_TRANSPORT_NAME, the variable bfo_net reads for a setting. */
static void setting_var(char *var, size_t cap, const char *tp, const char *name)
{
    snprintf(var, cap, "BFO_%s_%s", tp, name);
    for (char *p = var; *p; p++)
        *p = (char)toupper((unsigned char)*p);
}

/* One transport's setting in opt, checked by its table; with export_it
 * also its variable in this process's environment (for the ranks it
 * starts).  0, or -1 said on stderr. */
static int set_one(const char *who, const char *tp, const char *name, const char *value, bfo_net_options *opt,
                   int export_it)
{
    char why[200], var[80];
    if (bfo_net_options_set(opt, tp, name, value, why, sizeof why) != BFO_OK) {
        fprintf(stderr, "%s: %s.%s=%s: %s\n", who, tp, name, value, why);
        return -1;
    }
    setting_var(var, sizeof var, tp, name);
    if (export_it)
        setenv(var, value, 1);
    return 0;
}

/* TRANSPORT.NAME=VALUE set (set_one); TRANSPORT * : every transport of
 * this build that has a setting NAME.  0, or -1 said on stderr. */
static int set_setting(const char *who, const char *arg, bfo_net_options *opt, int export_it)
{
    char tp[BFO_NET_NAME_MAX], name[64];
    const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');
    const char *tn;
    int any = 0, n;
    if (!dot || !eq || dot > eq || (size_t)(dot - arg) >= sizeof tp || (size_t)(eq - dot - 1) >= sizeof name) {
        fprintf(stderr, "%s: %s: not TRANSPORT.NAME=VALUE (bfo run --settings lists them)\n", who, arg);
        return -1;
    }
    snprintf(tp, sizeof tp, "%.*s", (int)(dot - arg), arg);
    snprintf(name, sizeof name, "%.*s", (int)(eq - dot - 1), dot + 1);
    if (strcmp(tp, "*"))
        return set_one(who, tp, name, eq + 1, opt, export_it);
    for (int i = 0; bfo_net_settings(i, &tn, &n); i++)
        for (int k = 0; k < n; k++)
            if (!strcmp(bfo_net_settings(i, &tn, &n)[k].name, name)) {
                if (set_one(who, tn, name, eq + 1, opt, export_it) != 0)
                    return -1;
                any++;
            }
    if (!any)
        fprintf(stderr, "%s: no transport of this build (%s) has a setting %s\n", who, bfo_net_transports(), name);
    return any ? 0 : -1;
}

/* A figure of a setting, sizes with K, M or G when whole. */
static const char *figure(char *buf, size_t cap, double x, bfo_setting_type t)
{
    static const char suffix[] = "GMK";
    for (int i = 0; t == BFO_SETTING_SIZE && i < 3 && x > 0; i++) {
        double unit = (double)(1ull << (10 * (3 - i)));
        if (x >= unit && x / unit == (double)(unsigned long long)(x / unit)) {
            snprintf(buf, cap, "%.0f%c", x / unit, suffix[i]);
            return buf;
        }
    }
    snprintf(buf, cap, "%.15g", x);
    return buf;
}

/* bfo run --settings: every transport's table. */
static void list_settings(FILE *f)
{
    const char *tn;
    int n;
    fprintf(f, "%-28s %-5s %-10s %-22s %-4s %s\n", "SETTING (--set)", "TYPE", "DEFAULT", "RANGE", "SAME",
            "VARIABLE");
    for (int i = 0; bfo_net_settings(i, &tn, &n); i++) {
        const bfo_setting *t = bfo_net_settings(i, &tn, &n);
        for (int k = 0; k < n; k++) {
            char full[80], var[80], range[64], d[24], lo[24], hi[24];
            snprintf(full, sizeof full, "%s.%s", tn, t[k].name);
            setting_var(var, sizeof var, tn, t[k].name);
            snprintf(range, sizeof range, "%s..%s%s", figure(lo, sizeof lo, t[k].min, t[k].type),
                     figure(hi, sizeof hi, t[k].max, t[k].type), t[k].flags & BFO_SETTING_OFF ? ", off" : "");
            fprintf(f, "%-28s %-5s %-10s %-22s %-4s %s\n    %s\n", full, bfo_setting_type_name(t[k].type),
                    figure(d, sizeof d, t[k].def, t[k].type), range, t[k].flags & BFO_SETTING_SAME ? "yes" : "", var,
                    t[k].help);
        }
    }
}

static void kill_all(const pid_t *pid, const int *alive, int n, int sig)
{
    for (int i = 0; i < n; i++)
        if (alive[i])
            kill(pid[i], sig);
}

/* --rails VALUE as pml/bfo takes pml_bfo_rails (bfo_railsel.h: CIDRs,
 * interfaces, auto, ^exclude, ...), resolved here once: every rank runs on
 * this host, so this host's networks are the job's.  A plain list of
 * transports' rails ("127.0.0.2,127.0.0.3") goes as it is.  The list for
 * BFO_RAILS into out, or NULL (said). */
static const char *run_rails(const char *value, char *out, size_t cap, int verbose)
{
    static bfo_railsel s;
    static bfo_railsel_if ifs[BFO_RAILSEL_IF_MAX];
    char said[1024];
    int nifs;
    if (bfo_net_check_rails(value) >= 1) {
        if (verbose)
            fprintf(stderr, "bfo run: rails %s (as given)\n", value);
        return value;
    }
    nifs = bfo_railsel_host(ifs, BFO_RAILSEL_IF_MAX);
    if (bfo_railsel_pick(&s, value, ifs, nifs > 0 ? nifs : 0) != BFO_OK ||
        bfo_railsel_local(&s) != BFO_OK ||
        !bfo_railsel_list(&s, out, cap)) {
        fprintf(stderr, "bfo run: --rails %s: %s\n", value, s.err[0] ? s.err : "the list does not fit");
        return NULL;
    }
    if (verbose) {
        bfo_railsel_describe(&s, said, sizeof said);
        fprintf(stderr, "bfo run: rails %s from \"%s\": %s\n", out, value, said);
    }
    return out;
}

int bfo_cmd_run(int argc, char **argv)
{
    int n = 0, keep = 0, i, prog = -1, failed = 0, left, timed_out = 0;
    double timeout = 0;
    const char *rails = NULL, *pidfile = NULL, *boot = NULL;
    char bootbuf[64], picked[1024];
    uint8_t key[BFO_AUTH_KEY_LEN];
    int verbose = 0, lfd, kfd = -1;
    pid_t *pid;
    int *alive, *status, *tell; /* tell: per rank, the write end of its failure reports */
    struct timespec t0, tn;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            prog = i + 1;
            break;
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rails") && i + 1 < argc)
            rails = argv[++i];
        else if (!strcmp(argv[i], "--verbose"))
            verbose = 1;
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = atof(argv[++i]);
        else if (!strcmp(argv[i], "--keep-going"))
            keep = 1;
        else if (!strcmp(argv[i], "--pidfile") && i + 1 < argc)
            pidfile = argv[++i];
        else if (!strcmp(argv[i], "--bootstrap") && i + 1 < argc)
            boot = argv[++i];
        else if (!strcmp(argv[i], "--settings")) {
            list_settings(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            /* checked here, by the transport's table, so that a bad value fails
             * once, before any rank starts; the ranks read the variable */
            bfo_net_options scratch;
            memset(&scratch, 0, sizeof scratch);
            if (set_setting("bfo run", argv[++i], &scratch, 1) != 0)
                return 2;
        } else {
            fputs(run_usage, stderr);
            return 2;
        }
    }
    if (n < 1 || n > 4096 || prog < 0 || prog >= argc) {
        fputs(run_usage, stderr);
        return 2;
    }
    if (rails && (rails = run_rails(rails, picked, sizeof picked, verbose)) == NULL)
        return 2;
    if ((lfd = bootstrap_listener(boot, n, bootbuf, sizeof bootbuf)) < 0)
        return 1;
    boot = bootbuf;
    if (bfo_auth_keygen(key) != BFO_OK) {
        fprintf(stderr, "bfo run: no random membership key (libsodium)\n");
        return 1;
    }
    pid = calloc((size_t)n, sizeof *pid);
    alive = calloc((size_t)n, sizeof *alive);
    status = calloc((size_t)n, sizeof *status);
    tell = calloc((size_t)n, sizeof *tell);
    if (!pid || !alive || !status || !tell)
        return 1;
    signal(SIGINT, run_on_signal);
    signal(SIGTERM, run_on_signal);
    signal(SIGPIPE, SIG_IGN); /* a rank gone before its report: EPIPE, nothing more */
    fflush(NULL);
    for (i = 0; i < n; i++) {
        int pfd[2];
        /* the rank's failure reports: it reads, this launcher writes */
        if (pipe2(pfd, O_CLOEXEC) != 0) {
            perror("bfo run: pipe");
            kill_all(pid, alive, i, SIGKILL);
            return 1;
        }
        tell[i] = pfd[1];
        fcntl(pfd[1], F_SETFL, O_NONBLOCK);
        if ((kfd = key_pipe(key)) < 0) {
            perror("bfo run: the key's pipe");
            kill_all(pid, alive, i, SIGKILL);
            return 1;
        }
        pid[i] = fork();
        if (pid[i] < 0) {
            perror("bfo run: fork");
            kill_all(pid, alive, i, SIGKILL);
            return 1;
        }
        if (pid[i] == 0) {
            char b[32];
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGPIPE, SIG_DFL);
            fcntl(pfd[0], F_SETFD, 0); /* kept across exec */
            snprintf(b, sizeof b, "%d", pfd[0]);
            setenv("BFO_LAUNCHER_FD", b, 1);
            fcntl(kfd, F_SETFD, 0);
            snprintf(b, sizeof b, "%d", kfd);
            setenv("BFO_AUTH_FD", b, 1);
            if (i == 0) { /* rank 0 serves on the socket bound here */
                fcntl(lfd, F_SETFD, 0);
                snprintf(b, sizeof b, "%d", lfd);
                setenv("BFO_BOOTSTRAP_FD", b, 1);
            } else
                unsetenv("BFO_BOOTSTRAP_FD");
            snprintf(b, sizeof b, "%d", i);
            setenv("BFO_RANK", b, 1);
            snprintf(b, sizeof b, "%d", n);
            setenv("BFO_SIZE", b, 1);
            setenv("BFO_BOOTSTRAP", boot, 1);
            if (rails)
                setenv("BFO_RAILS", rails, 1);
            execvp(argv[prog], argv + prog);
            fprintf(stderr, "bfo run: %s: %s\n", argv[prog], strerror(errno));
            _exit(127);
        }
        close(pfd[0]);
        close(kfd);
        if (i == 0) {
            close(lfd); /* rank 0's now; nobody else's */
            lfd = -1;
        }
        alive[i] = 1;
    }
    bfo_auth_wipe_key(key); /* the ranks have it; this launcher needs it no more */
    if (pidfile) {
        FILE *f = fopen(pidfile, "w");
        if (f) {
            for (i = 0; i < n; i++)
                fprintf(f, "%d %d\n", i, (int)pid[i]);
            fclose(f);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    left = n;
    while (left > 0) {
        int st;
        pid_t w = waitpid(-1, &st, WNOHANG);
        if (w > 0) {
            for (i = 0; i < n && pid[i] != w; i++)
                ;
            if (i == n)
                continue;
            alive[i] = 0;
            status[i] = st;
            left--;
            close(tell[i]);
            tell[i] = -1;
            if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
                failed = 1;
                if (!keep && left > 0) {
                    fprintf(stderr, "bfo run: rank %d failed; stopping the others\n", i);
                    kill_all(pid, alive, n, SIGTERM);
                } else if (left > 0) { /* the others go on: they are told */
                    char line[32];
                    int len = snprintf(line, sizeof line, "failed %d\n", i), told = 0;
                    for (int j = 0; j < n; j++)
                        if (alive[j] && tell[j] >= 0)
                            told += write(tell[j], line, (size_t)len) == len;
                    fprintf(stderr, "bfo run: rank %d failed; %d rank(s) told\n", i, told);
                }
            }
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &tn);
        if (run_stop || (timeout > 0 && (double)(tn.tv_sec - t0.tv_sec) +
                                                (double)(tn.tv_nsec - t0.tv_nsec) / 1e9 > timeout)) {
            if (!run_stop && !timed_out)
                fprintf(stderr, "bfo run: timed out after %g s; killing every rank\n", timeout);
            timed_out = !run_stop;
            kill_all(pid, alive, n, SIGKILL);
            run_stop = 0;
            timeout = 0;
            failed = 1;
        }
        usleep(5000);
    }
    for (i = 0; i < n; i++) {
        if (WIFEXITED(status[i]))
            fprintf(stderr, "bfo run: rank %d pid %d: exit %d\n", i, (int)pid[i],
                    WEXITSTATUS(status[i]));
        else
            fprintf(stderr, "bfo run: rank %d pid %d: signal %d\n", i, (int)pid[i],
                    WIFSIGNALED(status[i]) ? WTERMSIG(status[i]) : -1);
    }
    for (i = 0; i < n; i++)
        if (tell[i] >= 0)
            close(tell[i]);
    free(pid);
    free(alive);
    free(status);
    free(tell);
    return timed_out ? 124 : failed ? 1 : 0;
}

/* --------------------------------------------------------------- stream */

#define ST_MAX_SIZES 32
enum { F_MSGS, F_BYTES, F_VERIFIED, F_CORRUPT, F_DUPS, F_LOST, F_UNREACH, F_DEAD, F_MAPOUTS,
       F_READMIT, F_CONNERR, F_MALFORMED, F_BACKPRESSURE, F_KEEPALIVES, F_STALE, F_VIOLATIONS, F_ABSENT,
       F_RDMA_READS, F_RDMA_WRITES, F_BUSY_HEARD, F_NUDGES, F_THREAD, F_CREDIT_RNDV, F_OVER_WINDOW,
       F_DEMOTIONS, F_PROMOTIONS,
       F_PROC_FAILED, F_RELAYED_FRAMES, F_RELAYED_BYTES, F_RELAY_PASSED, F_RELAY_RECEIVED,
       F_ROUTES_FOUND, F_ROUTES_LOST, F_RELAY_FAILED, F_RELAY_REFUSED, F_ACKS,
       F_TP, /* the transports' own counters, by name (tp_names) */
       NF = F_TP + 2 * BFO_TP_COUNTERS_MAX /* counters sent to rank 0 */ };

/* The names of the transports' own counters (bfo_net_counters) of this
 * build, each once, in the order of its transports: slot F_TP + i of every
 * rank is the sum over its rails of the counter named names[i], whatever
 * rails it has.  Returns how many. */
static int tp_names(const char **names)
{
    const bfo_counter_desc *d;
    int n = 0, k, nc;
    for (int i = 0; bfo_net_counters(i, &d, &nc); i++)
        for (int c = 0; c < nc; c++) {
            for (k = 0; k < n && strcmp(names[k], d[c].name); k++)
                ;
            if (k == n && n < NF - F_TP)
                names[n++] = d[c].name;
        }
    return n;
}

typedef struct slot {
    bfo_request req;
    uint8_t *buf;
    uint64_t idx;
    size_t len;
    int active;
    bfo_data d;          /* --data: buf described (bfo_isend_data, bfo_irecv_data) */
    bfo_data_seg *segs;
} slot;

typedef struct peer_st {
    slot *snd, *rcv;
    uint64_t sposted, sdone, rposted, rdone, nseen;
    uint64_t total;     /* messages the peer sends us (known at once, or by its TOTAL) */
    uint64_t total_out; /* what our TOTAL message says */
    bfo_request total_rreq, total_sreq;
    int total_known, total_posted, stopped;
    bfo_request ready_rreq, ready_sreq; /* --recv-first: the peer's READY, ours */
    int ready, ready_sent;
    uint8_t ready_in, ready_out;
    uint8_t *seen;
    int dead, skip;
    uint64_t drain_at[BFO_MAX_RAILS]; /* a rail left UP with operations in flight: since */
    int was_up[BFO_MAX_RAILS];
} peer_st;

typedef struct stream {
    bfo_net *t;
    bfo_engine *e;
    int rank, size, window, tolerate, verbose;
    int data; /* --data: 0 buffers, 1 iovec lists, 2 pack/unpack */
    uint64_t count, duration_ns, recv_delay_ns, send_delay_ns;
    int recv_first;
    int comp_rank, comp_done;     /* --compute: the rank, done yet */
    int linger_rank, linger_sleep; /* --linger: the rank that finishes last, asleep */
    uint64_t linger_ns;
    uint64_t comp_at, comp_ns;    /* ... when (after the start), for how long */
    size_t sizes[ST_MAX_SIZES];
    int nsizes;
    size_t maxsize;
    peer_st *p;
    uint64_t f[NF];
    uint64_t rail_bytes[BFO_MAX_RAILS];
    uint64_t last_mapouts, err_at, last_done, recovery_max, stall_max, unreach_max, drain_max;
    int err_pending;
    uint64_t tl_every, tl_next, tl_bytes[BFO_MAX_RAILS], tl_mapouts, tl_readm, tl_moves; /* timeline */
    int tty;
} stream;

/* A request that did not finish: where its machine is, what it waits for. */
static void dump_req(const stream *s, int p, const char *what, const slot *sl)
{
    const bfo_request *r = &sl->req;
    fprintf(stderr, "bfo stream[%d]: peer %d %s #%" PRIu64 " (buffer %zu bytes): %s, outstanding %d, "
            "done %zu of %zu, in flight %d, rseq %u%s%s\n", s->rank, p, what, sl->idx, r->cap,
            r->kind == BFO_REQ_SEND ? bfo_send_state_name(r->cs) : bfo_recv_state_name(r->cs),
            r->outstanding, r->done_bytes, r->kind == BFO_REQ_SEND ? r->cap : r->length,
            r->frags_inflight, (unsigned)r->rseq, r->restarted ? ", restarted" : "",
            r->reg ? ", registered" : "");
}

/* At a timeout: the engine, the transports, and every request not done (so
 * that a hang says where it hangs, in CI as at a desk). */
static void dump_unfinished(const stream *s)
{
    bfo_net_dump(s->t, stderr);
    for (int p = 0; p < s->size; p++) {
        if (p == s->rank || !s->p[p].snd)
            continue;
        for (int i = 0; i < s->window; i++) {
            if (s->p[p].snd[i].active && !bfo_test(&s->p[p].snd[i].req))
                dump_req(s, p, "send", &s->p[p].snd[i]);
            if (s->p[p].rcv[i].active && !bfo_test(&s->p[p].rcv[i].req))
                dump_req(s, p, "receive", &s->p[p].rcv[i]);
        }
    }
}

/* Rank 0's view as the stream goes: per rail, the bytes sent since the last
 * line (MB/s) and the rail's state towards the next rank; map-outs and
 * re-admissions as they happen.  Every --timeline interval one line; on a
 * terminal without --timeline, one line rewritten in place (a progress
 * display), with a full line at each failover. */
static void timeline(stream *s, uint64_t now, uint64_t t_start, int last)
{
    const bfo_engine *e = s->e;
    uint64_t every = s->tl_every ? s->tl_every : 200000000ull;
    int peer = (s->rank + 1) % s->size, event;
    char line[512];
    size_t n;
    if (s->rank != 0 || (!s->tl_every && !s->tty) || (now < s->tl_next && !last))
        return;
    double dt = s->tl_next ? (double)(now - (s->tl_next - every)) / 1e9 : (double)(now - t_start) / 1e9;
    event = e->stats.mapouts != s->tl_mapouts || e->stats.readmissions != s->tl_readm ||
            e->stats.demotions + e->stats.promotions != s->tl_moves;
    n = (size_t)snprintf(line, sizeof line, "%7.2f s ", (double)(now - t_start) / 1e9);
    for (int k = 0; k < e->cfg.nrails && n < sizeof line; k++) {
        int cs = bfo_rail_state(e, peer, k);
        double mbs = dt > 0 ? (double)(e->stats.rail_bytes[k] - s->tl_bytes[k]) / dt / 1e6 : 0;
        s->tl_bytes[k] = e->stats.rail_bytes[k];
        n += (size_t)snprintf(line + n, sizeof line - n, "| rail %d %8.1f MB/s %-12s (%.1f) ", k, mbs,
                              bfo_rail_state_name(cs), (double)bfo_rail_rate(e, peer, k) / 1e6);
    }
    if (n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "| msgs %" PRIu64 " | failovers %" PRIu64
                              " readmissions %" PRIu64 "%s", s->f[F_MSGS], e->stats.mapouts,
                              e->stats.readmissions, event ? "  <-" : "");
    s->tl_mapouts = e->stats.mapouts;
    s->tl_readm = e->stats.readmissions;
    s->tl_moves = e->stats.demotions + e->stats.promotions;
    if (s->tl_every || event || last)
        fprintf(stderr, "%s%s\n", s->tty && !s->tl_every ? "\r" : "", line);
    else
        fprintf(stderr, "\r%s", line);
    fflush(stderr);
    s->tl_next = now + every;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Message idx from src to dst: 8-byte word k is seed + (k + 1) * C, seed a
 * hash of (src, dst, idx) and C odd, so every word of a message differs from
 * every other of it (a shifted, repeated or reordered piece shows) and from the
 * words at the same place in every other message (a piece of another message
 * shows).  A multiply-add per word: a 1 MiB message is filled or checked in
 * about a tenth of a millisecond, so the stream's own work keeps its progress
 * calls close together (a mix64 per word took 1-2 ms per MiB, and the gaps it
 * left between progress calls were counted in recovery_ms_max). */
#define PATTERN_C 0x9e3779b97f4a7c15ull
static uint64_t pattern_seed(int src, int dst, uint64_t idx)
{
    return mix64(((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ idx);
}

static void pattern(uint8_t *b, size_t len, int src, int dst, uint64_t idx)
{
    uint64_t w = pattern_seed(src, dst, idx);
    size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        w += PATTERN_C;
        memcpy(b + k, &w, 8);
    }
    if (k < len) {
        w += PATTERN_C;
        memcpy(b + k, &w, len - k);
    }
}

static int pattern_ok(const uint8_t *b, size_t len, int src, int dst, uint64_t idx)
{
    uint64_t w = pattern_seed(src, dst, idx), diff = 0, x;
    size_t k = 0;
    for (; k + 8 <= len; k += 8) {
        w += PATTERN_C;
        memcpy(&x, b + k, 8);
        diff |= x ^ w;
    }
    if (k < len) {
        w += PATTERN_C;
        return !diff && !memcmp(b + k, &w, len - k);
    }
    return !diff;
}

/* The check must be able to fail: at every start, messages of 4096 and 4099
 * bytes pass, and each of these must not: one bit flipped (first, last, in
 * the tail, in between), the bytes shifted by 1 and by 8, two words swapped,
 * all zeros, and the right bytes checked as another message (idx, src or dst
 * off by one).  Returns the name of the first that went wrong, or NULL. */
static const char *pattern_selftest(void)
{
    static uint8_t b[4099 + 8];
    static const size_t flips[] = { 0, 7, 8, 2051, 4095, 4098 };
    for (size_t n = 4096; n <= 4099; n += 3) {
        uint64_t t;
        pattern(b, n, 3, 5, 77);
        if (!pattern_ok(b, n, 3, 5, 77))
            return "failed a good message";
        for (size_t i = 0; i < sizeof flips / sizeof flips[0] && flips[i] < n; i++) {
            b[flips[i]] ^= 0x10;
            if (pattern_ok(b, n, 3, 5, 77))
                return "passed a flipped bit";
            b[flips[i]] ^= 0x10;
        }
        if (pattern_ok(b, n, 3, 5, 78) || pattern_ok(b, n, 4, 5, 77) || pattern_ok(b, n, 3, 6, 77))
            return "passed another message's bytes";
        memcpy(&t, b + 800, 8);
        memcpy(b + 800, b + 808, 8);
        memcpy(b + 808, &t, 8);
        if (pattern_ok(b, n, 3, 5, 77))
            return "passed two words swapped";
        pattern(b + 1, n, 3, 5, 77);
        if (pattern_ok(b, n, 3, 5, 77))
            return "passed bytes shifted by 1";
        pattern(b + 8, n, 3, 5, 77);
        if (pattern_ok(b, n, 3, 5, 77))
            return "passed bytes shifted by 8";
        memset(b, 0, sizeof b);
        if (pattern_ok(b, n, 3, 5, 77))
            return "passed zeros";
    }
    return NULL;
}

static size_t size_of(const stream *s, int src, int dst, uint64_t i)
{
    return s->sizes[(i + (uint64_t)src + 2 * (uint64_t)dst) % (uint64_t)s->nsizes];
}

/* A list of message sizes ("8,4K,64K"; bfo_size_prefix): how many, or -1
 * for anything else (no silent 0: "64Q" was a run of empty messages). */
static int parse_sizes(const char *v, size_t *out, int max)
{
    int k = 0;
    for (const char *p = v;; p++) {
        unsigned long long x;
        if (k == max || bfo_size_prefix(p, &p, &x) != 0 || x > ((size_t)1 << 40) || (*p && *p != ','))
            return -1;
        out[k++] = (size_t)x;
        if (!*p)
            return k;
    }
}

/* bfo stream's flags from before the transports' tables: each one a
 * setting of theirs (TRANSPORT.NAME; * : every transport that has it). */
static const char *stream_alias(const char *flag)
{
    static const char *const alias[][2] = {
        { "--user-timeout-ms", "tcp.user_timeout_ms" }, { "--beacon-ms", "tcp.beacon_ms" },
        { "--notsent-lowat", "tcp.notsent_lowat" },     { "--connect-timeout-ms", "*.connect_timeout_ms" },
        { "--verbs-timeout", "verbs.timeout" },         { "--verbs-retry", "verbs.retry_cnt" },
    };
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (!strcmp(flag, alias[i][0]))
            return alias[i][1];
    return NULL;
}

static int peer_alive(const stream *s, int p) { return p != s->rank && !s->p[p].dead && !s->p[p].skip; }

/* A status that says the peer is gone: unreachable, or its process failed
 * (the launcher said so: bfo run --keep-going). */
static int st_gone(int st) { return st == BFO_ERR_PEER_UNREACHABLE || st == BFO_ERR_PROC_FAILED; }

static void note_unreachable(stream *s, int p, uint64_t now, int st)
{
    s->f[F_UNREACH]++;
    s->f[F_PROC_FAILED] += st == BFO_ERR_PROC_FAILED;
    if (!s->p[p].dead) {
        uint64_t since = s->e->peers[p].down_since;
        s->p[p].dead = 1;
        s->f[F_DEAD]++;
        if (since && now > since && now - since > s->unreach_max)
            s->unreach_max = now - since;
        fprintf(stderr, "bfo stream[%d]: peer %d %s (%.0f ms after its last rail went down)\n", s->rank, p,
                st == BFO_ERR_PROC_FAILED ? "failed (its process, the launcher says)" : "unreachable",
                since && now > since ? (double)(now - since) / 1e6 : -1.0);
    }
}

static int trace_rails;

/* Where a rank is after its stream (the end's steps); a watchdog (SIGALRM,
 * 10 s past --timeout) says which one it is stuck in, then ends it: a
 * rank that hangs there leaves its step in the log. */
static volatile sig_atomic_t end_step;
static const char *const end_steps[] = { "streaming", "the end's barrier", "the counts to rank 0",
                                         "the bye", "lingering", "bfo_net_fini (leaving, transports closing)" };
static void on_watchdog(int sig)
{
    char line[160];
    int k = end_step >= 0 && end_step < (int)(sizeof end_steps / sizeof *end_steps) ? end_step : 0;
    int n = snprintf(line, sizeof line, "bfo stream: still running 10 s past --timeout, in %s: ended\n",
                     end_steps[k]);
    (void)sig;
    if (n > 0 && write(2, line, (size_t)n) < 0)
        _exit(124);
    _exit(124);
}

/* SIGUSR2: the transport's state on stderr (bfo_net_dump), and go on. */
static volatile sig_atomic_t dump_asked;
static void on_usr2(int sig)
{
    (void)sig;
    dump_asked = 1;
}

/* --trace-rails: every rail transition on stderr, with the time since the first
 * (and CLOCK_MONOTONIC seconds, the clock of the verbs backend's log), and
 * every change of a peer's state (reached through a relay, given up, ...). */
static void trace_rail(void *user, const bfo_machine *m, const bfo_step *st)
{
    const stream *s = (const stream *)user;
    static uint64_t t0;
    uint64_t now = bfo_net_now();
    if (!t0)
        t0 = now;
    if (m->id == BFO_MACHINE_PEER && st->from != st->to) { /* where the peer is: RELAYED, ... */
        const int peer = (int)((const bfo_peer *)st->obj - s->e->peers);
        fprintf(stderr, "bfo stream[%d]: %9.3f ms (%.3f) peer %d: %s --%s--> %s%s\n", s->rank,
                (double)(now - t0) / 1e6, (double)now / 1e9, peer, bfo_peer_state_name(st->from),
                bfo_peer_event_name(st->event), bfo_peer_state_name(st->to),
                st->to == BFO_PEER_ST_RELAYED ? " (through a third rank)" : "");
        return;
    }
    if (m->id != BFO_MACHINE_RAIL || st->from == st->to)
        return;
    int peer = -1, rail = -1;
    for (int p = 0; p < s->size; p++)
        for (int r = 0; r < s->e->cfg.nrails; r++)
            if (st->obj == (const void *)&s->e->peers[p].rail[r]) {
                peer = p;
                rail = r;
            }
    fprintf(stderr, "bfo stream[%d]: %9.3f ms (%.3f) peer %d rail %d: %s --%s--> %s\n", s->rank,
            (double)(now - t0) / 1e6, (double)now / 1e9, peer, rail, bfo_rail_state_name(st->from),
            bfo_event_name(st->event), bfo_rail_state_name(st->to));
    if (peer >= 0 && (st->event == BFO_EV_PROBE_TIMED_OUT || st->event == BFO_EV_SILENCE_DETECTED)) {
        /* the evidence it was failed on, as the engine saw it (its clock) */
        const bfo_engine *e = s->e;
        const bfo_rail_link *rs = &e->peers[peer].rail[rail];
        uint64_t proc = 0;
        for (int r = 0; r < e->cfg.nrails; r++)
            if (e->peers[peer].rail[r].det.last_rx > proc)
                proc = e->peers[peer].rail[r].det.last_rx;
#define AGO(t) ((t) ? (double)(e->now - (t)) / 1e6 : -1.0)
        fprintf(stderr,
                "bfo stream[%d]:   the rail heard %.3f ms ago, its probe sent %.3f ms ago, its peer's host "
                "heard %.3f ms ago, busy %.3f ms ago, the process heard anywhere %.3f ms ago; probe timeout "
                "%.3f ms, srtt %.3f ms (-1: never)\n",
                s->rank, AGO(rs->det.last_rx), AGO(rs->det.probe_sent), AGO(rs->det.host_rx), AGO(rs->det.busy_at), AGO(proc),
                (double)bfo_rail_probe_timeout(e, peer, rail) / 1e6, (double)bfo_rail_rtt(e, peer, rail) / 1e6);
#undef AGO
    }
    if (peer >= 0 && st->event == BFO_EV_DEMOTION_DUE) { /* the rates it was demoted on */
        const bfo_engine *e = s->e;
        const bfo_rail_link *rs = &e->peers[peer].rail[rail];
        const uint64_t best = bfo_rail_best_other_rate(e, peer, rail); /* what the engine compared */
        fprintf(stderr,
                "bfo stream[%d]:   its rate %.1f MB/s against %.1f on the best other UP rail; %u slow "
                "samples, the first %.3f ms ago, the last sample %.3f ms ago; %llu bytes queued, "
                "completions take %.3f ms; %s\n",
                s->rank, (double)bfo_rail_rate(e, peer, rail) / 1e6, (double)best / 1e6, (unsigned)rs->rate.slow,
                (double)(e->now - rs->rate.slow_since) / 1e6, (double)(e->now - rs->rate.sampled_at) / 1e6,
                (unsigned long long)rs->rate.q_bytes, (double)rs->rate.lat / 1e6,
                rs->rate.measured ? "measured" : "on probation");
    }
}

static void completed_one(stream *s, uint64_t now)
{
    if (s->err_pending) {
        if (now - s->err_at > s->recovery_max)
            s->recovery_max = now - s->err_at;
        s->err_pending = 0;
    }
    if (s->last_done && now - s->last_done > s->stall_max)
        s->stall_max = now - s->last_done;
    s->last_done = now;
}

static volatile sig_atomic_t drop_toggles;
static void on_usr1(int sig)
{
    (void)sig;
    drop_toggles++;
}

/* Progress until every request in reqs[0..n) is complete or the deadline. */
static int wait_all(stream *s, bfo_request **reqs, int n, uint64_t deadline)
{
    for (;;) {
        int left = 0;
        for (int i = 0; i < n; i++)
            left += reqs[i] && !bfo_test(reqs[i]);
        if (!left)
            return 0;
        if (bfo_net_now() > deadline)
            return -1;
        bfo_net_progress(s->t, 1);
    }
}

/* --linger: the others send the lingering rank a farewell and leave (at
 * bfo_net_fini); it lingers, then receives the farewells of ranks that
 * left, and checks that they all said goodbye and none was taken for a
 * failed one.  0 when all is right. */
static int linger(stream *s, uint64_t deadline)
{
    const int r = s->linger_rank;
    uint64_t word = (uint64_t)s->rank, mapouts = s->e->stats.mapouts, got[64];
    bfo_request fw[64], probe;
    int bad = 0, nleft = 0, nfare = 0, others = 0, gone = -1;
    if (s->rank != r) {
        bfo_request *w[1] = { &fw[0] };
        if (s->linger_sleep || !peer_alive(s, r))
            return 0;
        bfo_isend(s->e, &fw[0], &word, sizeof word, r, 4, 4, bfo_net_now());
        return wait_all(s, w, 1, deadline) != 0 || fw[0].status != BFO_OK;
    }
    if (s->linger_sleep) {
        /* what it owes goes out first (the acknowledgement of the last
         * frames taken): a peer whose frame is left unacknowledged while its
         * probe crosses our last frame takes us for silent, not busy
         * (docs/engine-design.md, "The failure detector") */
        for (uint64_t end = bfo_net_now() + 100000000ull; bfo_net_now() < end;)
            bfo_net_progress(s->t, 1);
        struct timespec ts = { (time_t)(s->linger_ns / 1000000000ull), (long)(s->linger_ns % 1000000000ull) };
        nanosleep(&ts, NULL);
    } else {
        for (uint64_t end = bfo_net_now() + s->linger_ns; bfo_net_now() < end;)
            bfo_net_progress(s->t, 1);
    }
    for (int p = 0; p < s->size && p < 64; p++) { /* what the others left it */
        if (!peer_alive(s, p))
            continue;
        others++;
        if (s->linger_sleep)
            continue;
        got[p] = ~0ull;
        if (bfo_irecv(s->e, &fw[p], &got[p], sizeof got[p], p, 4, 4, bfo_net_now()) == BFO_OK &&
            bfo_test(&fw[p]) && fw[p].status == BFO_OK && got[p] == (uint64_t)p)
            nfare++;
    }
    /* every other rank said goodbye (asleep: it takes the BYEs now, which
     * came before the connections' ends) */
    for (uint64_t end = bfo_net_now() + 2000000000ull; bfo_net_now() < end && bfo_net_now() < deadline;) {
        nleft = 0;
        for (int p = 0; p < s->size; p++)
            nleft += peer_alive(s, p) && bfo_peer_left(s->e, p);
        if (nleft == others)
            break;
        bfo_net_progress(s->t, 1);
    }
    for (int p = 0; p < s->size; p++) {
        if (peer_alive(s, p) && s->e->peers[p].unreachable == BFO__GIVEN_UP)
            bad = 1;
        if (peer_alive(s, p) && bfo_peer_left(s->e, p) && gone < 0)
            gone = p;
    }
    if (gone >= 0 && bfo_isend(s->e, &probe, &word, sizeof word, gone, 4, 5, bfo_net_now()) != BFO_ERR_PEER_LEFT)
        bad = 1;
    /* asleep, a rank still streaming when it fell asleep may have mapped a
     * rail out (a probe crossing its last frames: docs/engine-design.md,
     * "The failure detector") and its notice comes now: not a goodbye's */
    bad |= nleft != others || (!s->linger_sleep && (s->e->stats.mapouts != mapouts || nfare != others));
    fprintf(stderr, "bfo stream[%d]: lingered %.0f ms%s: %d farewell(s) received after their senders "
            "left, %d of %d peers said goodbye, map-outs %llu, a send to a peer that left: %s%s\n",
            s->rank, (double)s->linger_ns / 1e6, s->linger_sleep ? " asleep" : "", nfare, nleft, others,
            (unsigned long long)(s->e->stats.mapouts - mapouts),
            gone >= 0 ? bfo_errname(probe.status) : "none", bad ? ": FAILED" : "");
    return bad;
}

/* --data: a slot's buffer described, an iovec over it (the sender and the
 * receiver cut it at different places, segments of about 1 to 3 KiB) or
 * pack/unpack callbacks. */
#define ST_SEG_MIN 997
static void st_pack(void *ctx, size_t off, void *dst, size_t n) { memcpy(dst, (uint8_t *)ctx + off, n); }
static void st_unpack(void *ctx, size_t off, const void *src, size_t n)
{
    memcpy((uint8_t *)ctx + off, src, n);
}
static const bfo_data *st_describe(const stream *s, slot *sl, size_t len, int send)
{
    memset(&sl->d, 0, sizeof sl->d);
    sl->d.len = len;
    if (s->data == 2) {
        sl->d.kind = BFO_DATA_PACK;
        sl->d.pack = st_pack;
        sl->d.unpack = st_unpack;
        sl->d.ctx = sl->buf;
        return &sl->d;
    }
    sl->d.kind = BFO_DATA_IOV;
    sl->d.segs = sl->segs;
    for (size_t off = 0, k = 0; off < len; k++) {
        size_t n = (send ? 1471 : ST_SEG_MIN) + (k * 389) % 2048;
        if (n > len - off)
            n = len - off;
        sl->segs[k].base = sl->buf + off;
        sl->segs[k].len = n;
        sl->d.nsegs = (int)k + 1;
        off += n;
    }
    return &sl->d;
}

/* --compute: a busy loop for ns nanoseconds that calls nothing of bfo (the
 * clock straight from the C library). */
static volatile uint64_t compute_sink; /* the busy loop's result, so that it is not optimised away */
static void compute(uint64_t ns)
{
    struct timespec ts;
    uint64_t x = 0;
    uint64_t end;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    end = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + ns;
    for (;;) {
        for (int k = 0; k < 100000; k++)
            x += (uint64_t)k * 2654435761u;
        compute_sink = x;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec >= end)
            break;
    }
    fprintf(stderr, "bfo stream: computed %.1f s without a call into bfo\n", (double)ns / 1e9);
}

static const char stream_usage[] =
    "usage: bfo stream [--size S | --sizes S1,S2,...] [--count N | --duration SEC] [--window W]\n"
    "                  [--json]\n"
    "                  [--tolerate-death] [--skip-rank R]... [--drop-on-signal RAIL] [--recv-delay-ms T]\n"
    "                  [--send-delay-ms T]   (receives or sends posted only T ms after the start)\n"
    "                  [--recv-first]   (every receive posted, and the peer told, before any send)\n"
    "                  [--trace-rails] [--data iov|pack] [--compute RANK|all:AT:SEC]\n"
    "                  [--heartbeat-ms T] [--silence-ms T] [--probe-timeout-ms T] [--grace-ms T]\n"
    "                  [--user-timeout-ms T] [--connect-timeout-ms T] [--timeout SEC] [-v]\n"
    "                  [--beacon-ms T|off] [--notsent-lowat BYTES|off]   TCP rails: beacon interval,\n"
    "                                   TCP_NOTSENT_LOWAT (bfo_tcp.h, OPTIONS)\n"
    "                  [--verbs-timeout EXP] [--verbs-retry N]   verbs rails: QP timeout, retry_cnt\n"
    "                  [--set TRANSPORT.NAME=VALUE]...   any transport's setting (bfo run --settings);\n"
    "                                   the flags above are tcp.*, verbs.* and *.connect_timeout_ms\n"
    "                  [--timeline MS]   rank 0: per-rail throughput and rail states every MS\n"
    "                  [--linger R:MS[:sleep]]   rank R leaves MS ms after the others (asleep: no call\n"
    "                                   into bfo), and checks that none was taken for a failed one\n";

int bfo_cmd_stream(int argc, char **argv)
{
    stream S, *s = &S;
    bfo_config cfg;
    bfo_net_options opt;
    int json = 0, drop_rail = -1, rc, bad = 0, skip[64], nskip = 0;
    double timeout = 120;
    int applied = 0, count_given = 0;
    uint64_t t_start, deadline;
    const char *weak = pattern_selftest();
    if (weak) {
        fprintf(stderr, "bfo stream: the byte check %s (a broken build?)\n", weak);
        return 2;
    }
    memset(s, 0, sizeof *s);
    s->comp_rank = -1;
    s->linger_rank = -1;
    memset(&cfg, 0, sizeof cfg);
    memset(&opt, 0, sizeof opt);
    s->count = 100;
    s->window = 8;
    {
        static const size_t def[] = { 64, 1000, 4096, 65536, 300000, 1048576 };
        for (int i = 0; i < 6; i++)
            s->sizes[i] = def[i];
        s->nsizes = 6;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json"))
            json = 1;
        else if (!strcmp(a, "--tolerate-death"))
            s->tolerate = 1;
        else if (!strcmp(a, "-v"))
            s->verbose = 1;
        else if (!strcmp(a, "--trace-rails"))
            trace_rails = 1;
        else if (!strcmp(a, "--recv-first"))
            s->recv_first = 1;
        else if (!v) {
            fputs(stream_usage, stderr);
            return 2;
        } else if (!strcmp(a, "--size") || !strcmp(a, "--sizes")) {
            s->nsizes = parse_sizes(v, s->sizes, !strcmp(a, "--size") ? 1 : ST_MAX_SIZES);
            if (s->nsizes < 0) {
                fprintf(stderr, "bfo stream: %s %s: not a size (digits, then K, M or G)%s\n", a, v,
                        !strcmp(a, "--sizes") ? ", or a list of them" : "");
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--data")) {
            s->data = !strcmp(v, "iov") ? 1 : !strcmp(v, "pack") ? 2 : -1;
            if (s->data < 0) {
                fputs(stream_usage, stderr);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--recv-delay-ms")) {
            s->recv_delay_ns = (uint64_t)(atof(v) * 1e6);
            i++;
        } else if (!strcmp(a, "--send-delay-ms")) {
            s->send_delay_ns = (uint64_t)(atof(v) * 1e6);
            i++;
        } else if (!strcmp(a, "--duration")) {
            s->duration_ns = (uint64_t)(atof(v) * 1e9);
            if (!count_given)
                s->count = 1000000;
            i++;
        } else if (!strcmp(a, "--count")) {
            count_given = 1;
            s->count = strtoull(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--window")) {
            s->window = atoi(v);
            i++;
        } else if (!strcmp(a, "--skip-rank") && nskip < 64) {
            skip[nskip++] = atoi(v);
            i++;
        } else if (!strcmp(a, "--compute")) {
            double at = 0, sec = 0;
            if (!strncmp(v, "all:", 4) && sscanf(v + 4, "%lf:%lf", &at, &sec) == 2)
                s->comp_rank = -2; /* every rank */
            else if (sscanf(v, "%d:%lf:%lf", &s->comp_rank, &at, &sec) != 3 || s->comp_rank < 0)
                at = -1;
            if (at < 0 || sec <= 0) {
                fputs(stream_usage, stderr);
                return 2;
            }
            s->comp_at = (uint64_t)(at * 1e9);
            s->comp_ns = (uint64_t)(sec * 1e9);
            i++;
        } else if (!strcmp(a, "--linger")) {
            double ms = 0;
            char mode[8] = "";
            if (sscanf(v, "%d:%lf:%7s", &s->linger_rank, &ms, mode) < 2 || s->linger_rank < 0 || ms < 0 ||
                (mode[0] && strcmp(mode, "sleep"))) {
                fputs(stream_usage, stderr);
                return 2;
            }
            s->linger_ns = (uint64_t)(ms * 1e6);
            s->linger_sleep = mode[0] != 0;
            i++;
        } else if (!strcmp(a, "--drop-on-signal")) {
            drop_rail = atoi(v);
            i++;
        } else if (!strcmp(a, "--heartbeat-ms")) {
            cfg.heartbeat_ns = (uint64_t)(atof(v) * 1e6);
            i++;
        } else if (!strcmp(a, "--silence-ms")) {
            cfg.silence_ns = (uint64_t)(atof(v) * 1e6);
            i++;
        } else if (!strcmp(a, "--probe-timeout-ms")) {
            cfg.probe_timeout_ns = (uint64_t)(atof(v) * 1e6);
            i++;
        } else if (!strcmp(a, "--grace-ms")) {
            cfg.unreachable_grace_ns = (uint64_t)(atof(v) * 1e6);
            i++;
        } else if (!strcmp(a, "--set") || stream_alias(a)) {
            char set[256]; /* an old flag: its setting */
            if (stream_alias(a))
                snprintf(set, sizeof set, "%s=%s", stream_alias(a), v);
            if (set_setting("bfo stream", stream_alias(a) ? set : v, &opt, 0) != 0)
                return 2;
            i++;
        } else if (!strcmp(a, "--timeout")) {
            timeout = atof(v);
            i++;
        } else if (!strcmp(a, "--timeline")) {
            s->tl_every = (uint64_t)(atof(v) * 1e6);
            i++;
        } else {
            fputs(stream_usage, stderr);
            return 2;
        }
    }
    if (s->recv_first) {
        if (s->duration_ns || s->count > (uint64_t)INT_MAX) {
            fputs(stream_usage, stderr);
            return 2;
        }
        s->window = (int)s->count;
    }
    if (s->count == 0 || s->window < 1 || s->nsizes < 1) {
        fputs(stream_usage, stderr);
        return 2;
    }
    for (int i = 0; i < s->nsizes; i++)
        if (s->sizes[i] > s->maxsize)
            s->maxsize = s->sizes[i];
    if (!s->maxsize)
        s->maxsize = 1;
    cfg.max_requests = 4096;
    rc = bfo_net_init(&s->t, &cfg, &opt);
    if (rc != BFO_OK) {
        fprintf(stderr, "bfo stream: init: %s\n", bfo_net_errname(rc));
        return 1;
    }
    signal(SIGUSR2, on_usr2);
    s->e = bfo_net_engine(s->t);
    s->rank = bfo_net_rank(s->t);
    s->size = bfo_net_size(s->t);
    if (trace_rails) {
        static bfo_tracer tr;
        tr.fn = trace_rail;
        tr.user = s;
        s->e->trace = &tr;
    }
    if (drop_rail >= 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sigaction(SIGUSR1, &sa, NULL);
    }
    s->p = calloc((size_t)s->size, sizeof *s->p);
    if (!s->p)
        return 1;
    for (int k = 0; k < nskip; k++)
        if (skip[k] >= 0 && skip[k] < s->size)
            s->p[skip[k]].skip = 1;
    if (s->p[s->rank].skip) { /* this rank takes no part */
        bfo_net_fini(s->t);
        return 0;
    }
    for (int p = 0; p < s->size; p++) {
        peer_st *ps = &s->p[p];
        if (!peer_alive(s, p))
            continue;
        ps->snd = calloc((size_t)s->window, sizeof *ps->snd);
        ps->rcv = calloc((size_t)s->window, sizeof *ps->rcv);
        ps->seen = calloc((size_t)s->count, 1);
        if (!ps->snd || !ps->rcv || !ps->seen)
            return 1;
        for (int w = 0; w < s->window; w++) {
            ps->snd[w].buf = malloc(s->maxsize);
            ps->rcv[w].buf = malloc(s->maxsize);
            ps->snd[w].segs = malloc((s->maxsize / ST_SEG_MIN + 2) * sizeof(bfo_data_seg));
            ps->rcv[w].segs = malloc((s->maxsize / ST_SEG_MIN + 2) * sizeof(bfo_data_seg));
            if (!ps->snd[w].buf || !ps->rcv[w].buf)
                return 1;
        }
    }
    t_start = bfo_net_now();
    deadline = t_start + (uint64_t)(timeout * 1e9);
    if (timeout > 0) {
        signal(SIGALRM, on_watchdog);
        alarm((unsigned)(timeout + 10.5));
    }
    s->tty = isatty(2);
    for (int p = 0; p < s->size; p++) { /* how many each peer sends us */
        peer_st *ps = &s->p[p];
        if (!peer_alive(s, p))
            continue;
        ps->total = s->count;
        ps->total_known = !s->duration_ns;
        if (s->duration_ns &&
            bfo_irecv(s->e, &ps->total_rreq, &ps->total, sizeof ps->total, p, 1, 7, t_start) != BFO_OK)
            ps->dead = 1;
        if (s->recv_first &&
            bfo_irecv(s->e, &ps->ready_rreq, &ps->ready_in, 1, p, 1, 9, t_start) != BFO_OK)
            ps->dead = 1;
    }

    /* ---- the stream */
    for (;;) {
        int busy = 0, unfinished = 0;
        uint64_t now = bfo_net_now();
        if ((s->rank == s->comp_rank || s->comp_rank == -2) && !s->comp_done && now - t_start >= s->comp_at) {
            compute(s->comp_ns);
            s->comp_done = 1;
            now = bfo_net_now();
        }
        bfo_net_lock(s->t); /* a no-op unless a progress thread runs */
        if (drop_rail >= 0 && applied != drop_toggles) {
            applied = drop_toggles;
            bfo_net_fault_drop(s->t, drop_rail, applied & 1);
            fprintf(stderr, "bfo stream[%d]: fault hook on rail %d %s\n", s->rank, drop_rail,
                    applied & 1 ? "ON" : "OFF");
        }
        for (int p = 0; p < s->size; p++) {
            peer_st *ps = &s->p[p];
            if (p == s->rank || ps->skip)
                continue;
            for (int w = 0; w < s->window && ps->snd; w++) {
                slot *sl = &ps->snd[w];
                if (sl->active && bfo_test(&sl->req)) {
                    sl->active = 0;
                    busy = 1;
                    ps->sdone++;
                    if (sl->req.status == BFO_OK)
                        completed_one(s, now);
                    else if (st_gone(sl->req.status) && s->tolerate)
                        note_unreachable(s, p, now, sl->req.status);
                    else {
                        fprintf(stderr, "bfo stream[%d]: send %" PRIu64 " to %d: %s\n", s->rank,
                                sl->idx, p, bfo_errname(sl->req.status));
                        bad = 1;
                        if (st_gone(sl->req.status))
                            ps->dead = 1;
                    }
                }
                if (!sl->active && !ps->dead && !ps->stopped && ps->sposted < s->count &&
                    now - t_start >= s->send_delay_ns && (!s->recv_first || ps->ready) &&
                    !(s->duration_ns && now - t_start >= s->duration_ns)) {
                    sl->idx = ps->sposted++;
                    sl->len = size_of(s, s->rank, p, sl->idx);
                    pattern(sl->buf, sl->len, s->rank, p, sl->idx);
                    rc = s->data ? bfo_isend_data(s->e, &sl->req, st_describe(s, sl, sl->len, 1), p, 0,
                                                  (int)sl->idx, now)
                                 : bfo_isend(s->e, &sl->req, sl->buf, sl->len, p, 0, (int)sl->idx, now);
                    sl->active = rc == BFO_OK || st_gone(rc);
                    if (!sl->active) {
                        fprintf(stderr, "bfo stream[%d]: isend: %s\n", s->rank, bfo_errname(rc));
                        bad = 1;
                        ps->sposted--;
                    }
                    busy = 1;
                }
                unfinished += sl->active;
            }
            if (ps->snd && !ps->stopped &&
                (ps->sposted >= s->count || (s->duration_ns && now - t_start >= s->duration_ns))) {
                ps->stopped = 1; /* no more sends: tell the peer how many there were */
                ps->total_out = ps->sposted;
                if (s->duration_ns && !ps->dead) {
                    rc = bfo_isend(s->e, &ps->total_sreq, &ps->total_out, sizeof ps->total_out, p, 1, 7,
                                   now);
                    ps->total_posted = rc == BFO_OK || st_gone(rc);
                }
            }
            if (s->duration_ns && !ps->total_known && bfo_test(&ps->total_rreq)) {
                ps->total_known = 1;
                if (ps->total_rreq.status != BFO_OK) {
                    if (st_gone(ps->total_rreq.status) && s->tolerate)
                        note_unreachable(s, p, now, ps->total_rreq.status);
                    else
                        bad = 1;
                    ps->dead = 1;
                } else if (ps->total > s->count) {
                    fprintf(stderr, "bfo stream[%d]: peer %d sent more than --count\n", s->rank, p);
                    bad = 1;
                    ps->total = s->count;
                }
            }
            for (int w = 0; w < s->window && ps->rcv; w++) {
                slot *sl = &ps->rcv[w];
                if (sl->active && bfo_test(&sl->req)) {
                    bfo_request *r = &sl->req;
                    sl->active = 0;
                    busy = 1;
                    ps->rdone++;
                    if (r->status == BFO_OK) {
                        uint64_t tag = (uint64_t)r->tag;
                        s->f[F_MSGS]++;
                        s->f[F_BYTES] += r->length;
                        completed_one(s, now);
                        if (tag >= s->count || ps->seen[tag]) {
                            s->f[F_DUPS]++;
                            fprintf(stderr, "bfo stream[%d]: duplicate message %" PRIu64 " from %d\n",
                                    s->rank, tag, p);
                        } else {
                            ps->seen[tag] = 1;
                            ps->nseen++;
                            if (tag != sl->idx)
                                fprintf(stderr, "bfo stream[%d]: message %" PRIu64 " from %d arrived "
                                        "as number %" PRIu64 "\n", s->rank, tag, p, sl->idx);
                            if (r->length == size_of(s, p, s->rank, tag) &&
                                pattern_ok(sl->buf, r->length, p, s->rank, tag))
                                s->f[F_VERIFIED]++;
                            else {
                                s->f[F_CORRUPT]++;
                                fprintf(stderr, "bfo stream[%d]: message %" PRIu64 " from %d corrupt "
                                        "(length %zu)\n", s->rank, tag, p, r->length);
                            }
                        }
                    } else if (st_gone(r->status) && s->tolerate) {
                        note_unreachable(s, p, now, r->status);
                    } else {
                        fprintf(stderr, "bfo stream[%d]: receive from %d: %s\n", s->rank, p,
                                bfo_errname(r->status));
                        bad = 1;
                        if (st_gone(r->status))
                            ps->dead = 1;
                    }
                }
                if (!sl->active && !ps->dead && ps->rposted < ps->total &&
                    now - t_start >= s->recv_delay_ns) {
                    sl->idx = ps->rposted++;
                    rc = s->data ? bfo_irecv_data(s->e, &sl->req, st_describe(s, sl, s->maxsize, 0), p, 0,
                                                  BFO_ANY_TAG, now)
                                 : bfo_irecv(s->e, &sl->req, sl->buf, s->maxsize, p, 0, BFO_ANY_TAG, now);
                    sl->active = rc == BFO_OK || st_gone(rc);
                    if (!sl->active) {
                        fprintf(stderr, "bfo stream[%d]: irecv: %s\n", s->rank, bfo_errname(rc));
                        bad = 1;
                        ps->rposted--;
                    }
                    busy = 1;
                }
            }
            if (s->recv_first && !ps->dead && !ps->ready_sent && ps->rposted >= ps->total) {
                /* every receive from p is posted: p may send */
                rc = bfo_isend(s->e, &ps->ready_sreq, &ps->ready_out, 1, p, 1, 9, now);
                ps->ready_sent = 1;
                if (rc != BFO_OK && !st_gone(rc)) {
                    fprintf(stderr, "bfo stream[%d]: READY to %d: %s\n", s->rank, p, bfo_errname(rc));
                    bad = 1;
                    ps->dead = 1;
                }
                busy = 1;
            }
            if (s->recv_first && !ps->dead && !ps->ready && bfo_test(&ps->ready_rreq)) {
                ps->ready = ps->ready_rreq.status == BFO_OK;
                if (!ps->ready) {
                    if (st_gone(ps->ready_rreq.status) && s->tolerate)
                        note_unreachable(s, p, now, ps->ready_rreq.status);
                    else
                        bad = 1;
                    ps->dead = 1;
                }
                busy = 1;
            }
            if (ps->dead || !ps->snd)
                continue;
            if (s->recv_first && (!ps->ready || !ps->ready_sent || !bfo_test(&ps->ready_sreq)))
                unfinished++;
            for (int w = 0; w < s->window; w++) /* receives past the total may stay posted */
                unfinished += ps->snd[w].active + (ps->rcv[w].active && ps->rcv[w].idx < ps->total);
            if (!ps->stopped || (ps->total_posted && !bfo_test(&ps->total_sreq)) || !ps->total_known ||
                ps->nseen < ps->total)
                unfinished++;
        }
        /* a rail mapped out (UP -> another state) with operations in flight:
         * how long until they all completed (failed), free to go out again
         * over the other rails */
        for (int p = 0; p < s->size; p++)
            for (int r = 0; p != s->rank && r < s->e->cfg.nrails; r++) {
                const bfo_rail_link *rl = &s->e->peers[p].rail[r];
                uint64_t *at = &s->p[p].drain_at[r];
                int was_up = s->p[p].was_up[r], cs = bfo_rail_state(s->e, p, r);
                int live = cs == BFO_RAIL_ST_UP || cs == BFO_RAIL_ST_DEMOTED; /* demoted: no failover */
                s->p[p].was_up[r] = live;
                if (!*at && was_up && !live && rl->rate.inflight > 0) {
                    *at = now;
                    if (trace_rails)
                        fprintf(stderr, "bfo stream[%d]: (%.3f) peer %d rail %d: %s with %d operation(s) "
                                "in flight\n", s->rank, (double)now / 1e9, p, r,
                                bfo_rail_state_name(cs), rl->rate.inflight);
                } else if (*at && rl->rate.inflight == 0) {
                    if (now - *at > s->drain_max)
                        s->drain_max = now - *at;
                    if (trace_rails)
                        fprintf(stderr, "bfo stream[%d]: (%.3f) peer %d rail %d: %s, nothing in flight any "
                                "more: %.3f ms\n", s->rank, (double)now / 1e9, p, r,
                                bfo_rail_state_name(cs), (double)(now - *at) / 1e6);
                    *at = 0;
                }
            }
        if (s->e->stats.mapouts != s->last_mapouts) {
            s->last_mapouts = s->e->stats.mapouts;
            if (!s->err_pending) {
                s->err_pending = 1;
                s->err_at = now;
            }
        }
        timeline(s, now, t_start, !unfinished);
        if (!unfinished)
            break;
        if (now > deadline) {
            fprintf(stderr, "bfo stream[%d]: timed out with messages outstanding\n", s->rank);
            bfo_net_unlock(s->t);
            dump_unfinished(s);
            bfo_net_lock(s->t);
            bad = 1;
            break;
        }
        bfo_net_unlock(s->t);
        bfo_net_progress(s->t, busy ? 0 : 1);
        if (dump_asked) {
            dump_asked = 0;
            bfo_net_dump(s->t, stderr);
        }
    }
    bfo_net_unlock(s->t);
    int timed_out = bfo_net_now() > deadline;
    for (int p = 0; p < s->size; p++)
        if (peer_alive(s, p) || (p != s->rank && s->p[p].dead && !s->tolerate && !s->p[p].skip))
            for (uint64_t i = 0; i < s->p[p].total; i++)
                s->f[F_LOST] += !s->p[p].seen[i];

    /* ---- the end: a barrier, the duplicate check, counts to rank 0, bye */
    end_step = 1;
    if (!timed_out) {
        uint64_t one = 1, dl = bfo_net_now() + 30000000000ull;
        bfo_request *rq = calloc(4 * (size_t)s->size, sizeof *rq);
        bfo_request **w = calloc(4 * (size_t)s->size, sizeof *w);
        uint64_t *in = calloc((size_t)s->size, sizeof *in);
        uint8_t *sink = malloc(s->maxsize);
        int nw = 0;
        if (!rq || !w || !in || !sink)
            return 1;
        for (int p = 0; p < s->size; p++)
            if (peer_alive(s, p)) {
                bfo_isend(s->e, &rq[4 * p], &one, sizeof one, p, 1, 1, bfo_net_now());
                bfo_irecv(s->e, &rq[4 * p + 1], &in[p], sizeof in[p], p, 1, 1, bfo_net_now());
                w[nw++] = &rq[4 * p];
                w[nw++] = &rq[4 * p + 1];
            }
        if (wait_all(s, w, nw, dl) != 0) {
            fprintf(stderr, "bfo stream[%d]: end barrier timed out\n", s->rank);
            bad = 1;
        }
        for (int i = 0; i < nw; i++)
            if (st_gone(w[i]->status) && s->tolerate)
                note_unreachable(s, w[i]->peer >= 0 ? w[i]->peer : 0, bfo_net_now(), w[i]->status);
        /* anything more on the data context is a duplicate */
        for (int p = 0; p < s->size; p++)
            if (peer_alive(s, p))
                bfo_irecv(s->e, &rq[4 * p + 2], sink, s->maxsize, p, 0, BFO_ANY_TAG, bfo_net_now());
        for (uint64_t end = bfo_net_now() + 20000000ull; bfo_net_now() < end;)
            bfo_net_progress(s->t, 1);
        for (int p = 0; p < s->size; p++)
            if (peer_alive(s, p)) {
                int extra = bfo_test(&rq[4 * p + 2]) && rq[4 * p + 2].status == BFO_OK;
                for (int w2 = 0; w2 < s->window; w2++) /* receives left posted past the total */
                    extra += s->p[p].rcv[w2].active && bfo_test(&s->p[p].rcv[w2].req) &&
                             s->p[p].rcv[w2].req.status == BFO_OK;
                if (extra) {
                    s->f[F_DUPS] += (uint64_t)extra;
                    fprintf(stderr, "bfo stream[%d]: %d extra message(s) from %d\n", s->rank, extra, p);
                }
            }
        /* counts */
        const bfo_net_stats *ts = bfo_net_get_stats(s->t);
        const char *tpn[NF - F_TP];
        int ntp = tp_names(tpn), nc;
        s->f[F_MAPOUTS] = s->e->stats.mapouts;
        s->f[F_READMIT] = s->e->stats.readmissions;
        s->f[F_STALE] = s->e->stats.stale_dropped;
        s->f[F_VIOLATIONS] = s->e->stats.protocol_violations + s->e->stats.malformed_frames;
        s->f[F_RDMA_READS] = s->e->stats.rdma_reads;
        s->f[F_RDMA_WRITES] = s->e->stats.rdma_writes;
        s->f[F_THREAD] = ts->thread_rounds;
        s->f[F_CREDIT_RNDV] = s->e->stats.credit_rndv;
        s->f[F_OVER_WINDOW] = s->e->over_window;
        s->f[F_DEMOTIONS] = s->e->stats.demotions;
        s->f[F_PROMOTIONS] = s->e->stats.promotions;
        s->f[F_RELAYED_FRAMES] = s->e->stats.relayed_frames;
        s->f[F_RELAYED_BYTES] = s->e->stats.relayed_bytes;
        s->f[F_RELAY_PASSED] = s->e->stats.relay_passed;
        s->f[F_RELAY_RECEIVED] = s->e->stats.relay_received;
        s->f[F_ROUTES_FOUND] = s->e->stats.routes_found;
        s->f[F_ROUTES_LOST] = s->e->stats.routes_lost;
        s->f[F_RELAY_FAILED] = s->e->stats.relay_failed;
        s->f[F_RELAY_REFUSED] = s->e->stats.relay_refused;
        for (int p = 0; p < s->size; p++) /* (peer, rail) that does not reach: not failures */
            for (int r = 0; p != s->rank && r < bfo_net_nrails(s->t); r++)
                s->f[F_ABSENT] += bfo_rail_state(s->e, p, r) == BFO_RAIL_ST_ABSENT;
        for (int r = 0; r < bfo_net_nrails(s->t); r++) {
            s->rail_bytes[r] = ts->rail[r].bytes_tx;
            s->f[F_CONNERR] += ts->rail[r].conn_errors;
            s->f[F_MALFORMED] += ts->rail[r].malformed;
            s->f[F_BACKPRESSURE] += ts->rail[r].backpressure;
            s->f[F_KEEPALIVES] += ts->rail[r].keepalives_tx;
            s->f[F_BUSY_HEARD] += ts->rail[r].busy_heard;
            s->f[F_NUDGES] += ts->rail[r].nudges_tx;
            s->f[F_ACKS] += ts->rail[r].acks_tx;
            const bfo_counter_desc *d = bfo_net_rail_counters(s->t, r, &nc);
            for (int c = 0; c < nc; c++)
                for (int k = 0; k < ntp; k++)
                    if (!strcmp(tpn[k], d[c].name))
                        s->f[F_TP + k] += ts->rail[r].tp[c];
        }
        uint64_t mine[NF + BFO_MAX_RAILS + 4];
        memcpy(mine, s->f, sizeof s->f);
        memcpy(mine + NF, s->rail_bytes, sizeof s->rail_bytes);
        mine[NF + BFO_MAX_RAILS] = s->recovery_max;
        mine[NF + BFO_MAX_RAILS + 1] = s->stall_max;
        mine[NF + BFO_MAX_RAILS + 2] = s->unreach_max;
        mine[NF + BFO_MAX_RAILS + 3] = s->drain_max;
        uint64_t (*all)[NF + BFO_MAX_RAILS + 4] = calloc((size_t)s->size, sizeof *all);
        if (!all)
            return 1;
        memcpy(all[s->rank], mine, sizeof mine);
        end_step = 2;
        nw = 0;
        if (s->rank == 0) {
            for (int p = 1; p < s->size; p++)
                if (peer_alive(s, p)) {
                    bfo_irecv(s->e, &rq[4 * p + 3], all[p], sizeof all[p], p, 2, 2, bfo_net_now());
                    w[nw++] = &rq[4 * p + 3];
                }
        } else if (peer_alive(s, 0)) {
            bfo_isend(s->e, &rq[3], mine, sizeof mine, 0, 2, 2, bfo_net_now());
            w[nw++] = &rq[3];
        }
        if (wait_all(s, w, nw, dl) != 0)
            bad = 1;
        /* bye: rank 0 lets the others go once it has every count */
        bfo_request bye[1];
        end_step = 3;
        nw = 0;
        if (s->rank == 0) {
            for (int p = 1; p < s->size; p++)
                if (peer_alive(s, p)) {
                    bfo_isend(s->e, &rq[4 * p], &one, sizeof one, p, 3, 3, bfo_net_now());
                    w[nw++] = &rq[4 * p];
                }
        } else if (peer_alive(s, 0)) {
            bfo_irecv(s->e, bye, &in[0], sizeof in[0], 0, 3, 3, bfo_net_now());
            w[nw++] = bye;
        }
        if (wait_all(s, w, nw, dl) != 0)
            bad = 1;
        if (s->rank == 0) {
            uint64_t tot[NF + BFO_MAX_RAILS + 4];
            memset(tot, 0, sizeof tot);
            for (int p = 0; p < s->size; p++) {
                if (p != 0 && !peer_alive(s, p))
                    continue;
                for (int k = 0; k < NF + BFO_MAX_RAILS; k++)
                    tot[k] += all[p][k];
                for (int k = NF + BFO_MAX_RAILS; k < NF + BFO_MAX_RAILS + 4; k++)
                    if (all[p][k] > tot[k])
                        tot[k] = all[p][k];
                if (all[p][F_DEAD] > 0 && p != 0)
                    tot[F_DEAD] -= all[p][F_DEAD]; /* counted once: rank 0's view */
            }
            if (json) {
                printf("{\"ranks\":%d,\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64
                       ",\"verified\":%" PRIu64 ",\"corrupt\":%" PRIu64 ",\"duplicates\":%" PRIu64
                       ",\"lost\":%" PRIu64 ",\"errored\":%" PRIu64 ",\"unreachable\":%" PRIu64
                       ",\"dead_peers\":%" PRIu64
                       ",\"failovers\":%" PRIu64 ",\"readmissions\":%" PRIu64
                       ",\"recovery_ms_max\":%.3f,\"stall_ms_max\":%.3f,\"unreachable_ms_max\":%.3f"
                       ",\"failover_ms_max\":%.3f"
                       ",\"elapsed_ms\":%.1f,\"conn_errors\":%" PRIu64 ",\"malformed_drops\":%" PRIu64
                       ",\"backpressure\":%" PRIu64 ",\"keepalives\":%" PRIu64
                       ",\"stale_frames\":%" PRIu64 ",\"protocol_violations\":%" PRIu64
                       ",\"absent_rails\":%" PRIu64 ",\"rdma_reads\":%" PRIu64 ",\"rdma_writes\":%" PRIu64
                       ",\"host_heard\":%" PRIu64 ",\"nudges\":%" PRIu64 ",\"thread_rounds\":%" PRIu64
                       ",\"credit_rndv\":%" PRIu64 ",\"over_window\":%" PRIu64,
                       s->size, tot[F_MSGS], tot[F_BYTES], tot[F_VERIFIED], tot[F_CORRUPT],
                       tot[F_DUPS], tot[F_LOST], tot[F_UNREACH], tot[F_UNREACH], tot[F_DEAD], tot[F_MAPOUTS],
                       tot[F_READMIT], (double)tot[NF + BFO_MAX_RAILS] / 1e6,
                       (double)tot[NF + BFO_MAX_RAILS + 1] / 1e6,
                       (double)tot[NF + BFO_MAX_RAILS + 2] / 1e6,
                       (double)tot[NF + BFO_MAX_RAILS + 3] / 1e6,
                       (double)(bfo_net_now() - t_start) / 1e6, tot[F_CONNERR], tot[F_MALFORMED], tot[F_BACKPRESSURE],
                       tot[F_KEEPALIVES], tot[F_STALE], tot[F_VIOLATIONS], tot[F_ABSENT], tot[F_RDMA_READS],
                       tot[F_RDMA_WRITES], tot[F_BUSY_HEARD], tot[F_NUDGES], tot[F_THREAD],
                       tot[F_CREDIT_RNDV], tot[F_OVER_WINDOW]);
                for (int k = 0; k < ntp; k++) /* the transports' own, by their rows' names */
                    printf(",\"%s\":%" PRIu64, tpn[k], tot[F_TP + k]);
                printf(",\"demotions\":%" PRIu64 ",\"promotions\":%" PRIu64
                       ",\"proc_failed\":%" PRIu64
                       ",\"relayed_frames\":%" PRIu64 ",\"relayed_bytes\":%" PRIu64
                       ",\"relay_passed\":%" PRIu64 ",\"relay_received\":%" PRIu64
                       ",\"routes_found\":%" PRIu64 ",\"routes_lost\":%" PRIu64
                       ",\"relay_failed\":%" PRIu64 ",\"relay_refused\":%" PRIu64
                       ",\"acks\":%" PRIu64 ",\"per_rail_bytes\":[",
                       tot[F_DEMOTIONS], tot[F_PROMOTIONS],
                       tot[F_PROC_FAILED], tot[F_RELAYED_FRAMES], tot[F_RELAYED_BYTES], tot[F_RELAY_PASSED],
                       tot[F_RELAY_RECEIVED], tot[F_ROUTES_FOUND], tot[F_ROUTES_LOST], tot[F_RELAY_FAILED],
                       tot[F_RELAY_REFUSED], tot[F_ACKS]);
                for (int r = 0; r < bfo_net_nrails(s->t); r++)
                    printf("%s%" PRIu64, r ? "," : "", tot[NF + r]);
                /* rank 0 toward rank 1 at the end: each rail's state and
                 * measured rate (MB/s) */
                printf("],\"rail_states\":[");
                for (int r = 0; r < bfo_net_nrails(s->t); r++)
                    printf("%s\"%s\"", r ? "," : "",
                           s->size > 1 ? bfo_rail_state_name(bfo_rail_state(s->e, 1, r)) : "");
                printf("],\"rail_rates\":[");
                for (int r = 0; r < bfo_net_nrails(s->t); r++)
                    printf("%s%.1f", r ? "," : "", s->size > 1 ? (double)bfo_rail_rate(s->e, 1, r) / 1e6 : 0.0);
                printf("]}\n");
                fflush(stdout);
            }
            if (tot[F_CORRUPT] || tot[F_DUPS] || tot[F_LOST] ||
                tot[F_VERIFIED] + tot[F_CORRUPT] != tot[F_MSGS])
                bad = 1;
        }
        end_step = 4;
        if (s->linger_rank >= 0 && s->linger_rank < s->size && linger(s, dl) != 0)
            bad = 1;
        end_step = 5;
        bfo_net_fini(s->t);
        free(rq);
        free(w);
        free(in);
        free(sink);
        free(all);
    } else {
        end_step = 5;
        bfo_net_fini(s->t);
    }
    alarm(0);
    if (s->f[F_CORRUPT] || s->f[F_DUPS] || s->f[F_LOST])
        bad = 1;
    if (s->verbose || bad)
        fprintf(stderr,
                "bfo stream[%d]: %s: received %" PRIu64 " (verified %" PRIu64 ", corrupt %" PRIu64
                ", duplicates %" PRIu64 ", lost %" PRIu64 ", unreachable %" PRIu64 ")\n",
                s->rank, bad ? "FAILED" : "ok", s->f[F_MSGS], s->f[F_VERIFIED], s->f[F_CORRUPT],
                s->f[F_DUPS], s->f[F_LOST], s->f[F_UNREACH]);
    for (int p = 0; p < s->size; p++) {
        if (s->p[p].snd)
            for (int w2 = 0; w2 < s->window; w2++) {
                free(s->p[p].snd[w2].buf);
                free(s->p[p].rcv[w2].buf);
                free(s->p[p].snd[w2].segs);
                free(s->p[p].rcv[w2].segs);
            }
        free(s->p[p].snd);
        free(s->p[p].rcv);
        free(s->p[p].seen);
    }
    free(s->p);
    return bad ? 1 : 0;
}
