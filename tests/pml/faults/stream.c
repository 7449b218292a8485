// SPDX-License-Identifier: BSD-3-Clause
/* stream.c - a verified MPI stream for the PML fault tests (tests/pml/faults/).
 *
 * Pair mode (default): ranks (0,1), (2,3), ... each even rank streams to the
 * odd rank next to it (--bidir: both ways).  Hub mode (--hub): rank 0 and
 * every other rank stream both ways, and when a peer dies rank 0's
 * operations to it must end with an MPI error (printed: error class, its
 * name, MPI_Error_string) while rank 0 keeps streaming to the others and
 * finishes.  MPI_COMM_WORLD runs with MPI_ERRORS_RETURN in both modes.
 * Messages: --size (default 4 MiB) or --mixed (8 B, 64 KiB, 1 MiB in
 * turn); --window W nonblocking operations per direction (default 8).
 *
 * Every payload byte is a function of (source, destination, sequence
 * number, offset): the receiver checks every byte of every message, the
 * byte count (MPI_Get_count), source and tag.  Matching is in order (one
 * tag per direction), so a lost, duplicated or reordered message shows up
 * as a pattern mismatch.
 *
 * Length: --bytes B (each direction of each pair carries B bytes, rounded
 * up to whole messages; both ends know the count) or --duration S (the
 * sender stops after S seconds and tells the receiver how many messages
 * it sent; the receiver answers how many receives it has posted, and the
 * sender matches the surplus with empty messages).
 *
 * Output, one line each, flushed at once (mpirun forwards them):
 *   start rank=R size=N pid=P host=H t=EPOCH
 *   progress rank=R t=EPOCH el=S bytes=B rx_bytes=B tx_bytes=B rx_msgs=M MBps=X [stalled]
 *   error rank=R t=EPOCH el=S peer=P op=send|recv|ctrl seq=S class=C name=MPI_ERR_.. string="..."
 *   corrupt rank=R peer=P seq=S size=N offset=O expected=0x.. got=0x.. bad_bytes=K
 *   count rank=R peer=P seq=S expected=N got=M
 *   dead rank=R t=EPOCH el=S peer=P dir=tx|rx
 *   peer rank=R peer=P dir=tx|rx msgs=.. bytes=.. verified=.. corrupt=.. count_errors=..
 *        mpi_errors=.. late_ok=.. state=done|dead|unfinished
 *   finalized rank=R t=EPOCH      (or: finalize rank=R: MPI_Finalize did not return ...)
 *   {"summary":1,"rank":R,"messages":M,"bytes":B,"verified":V,"errors":E,...}
 * "messages"/"bytes"/"verified" count received data messages; tx_* what
 * this rank sent; late_ok (hub mode) operations with a dead peer that
 * completed without an error after its first error.  Completions are
 * collected with MPI_Testsome: Open MPI 4.1's MPI_Testany and MPI_Waitany
 * report the first failed request and free every other failed request of
 * the array unreported.
 *
 * Exit status: 0 when every message was verified and no MPI error
 * happened (hub mode: MPI errors are allowed on the operations to peers
 * that died, and nowhere else); 1 on a corrupt byte or a wrong count, 2 on
 * an MPI error (pair mode: after the summary, MPI_Abort, as what is
 * pending may never complete), 64 on bad arguments.  MPI_Finalize is bounded
 * by --finalize-timeout (default 20 s; with a dead rank it can wait for
 * ever): then the rank exits with that status without it.
 * --inject-corrupt SEQ (a self-test of the checker) flips a byte of
 * message SEQ in the sender's buffer after filling it.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TAG_DATA = 4101, TAG_COUNT = 4102, TAG_POSTED = 4103 };
enum { TX, RX };
enum { K_DATA, K_CTRL_RECV, K_CTRL_SEND };

static int me, np;
static double t0;                   /* CLOCK_MONOTONIC at the start barrier */
static int hub, bidir, mixed, window = 8, quiet;
static size_t msg_size = 4u << 20;
static uint64_t opt_bytes;
static double opt_duration, progress_every = 0.5, finalize_timeout = 20;
static int max_reports = 8;
static uint64_t inject_corrupt = UINT64_MAX;   /* self-test: the sender flips a byte of this message */

static const size_t mixed_sizes[3] = { 8, 64u << 10, 1u << 20 };

static double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now_epoch(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t size_of(uint64_t seq)
{
    return mixed ? mixed_sizes[seq % 3] : msg_size;
}
static size_t max_size(void)
{
    return mixed ? mixed_sizes[2] : msg_size;
}
/* messages needed for B bytes */
static uint64_t count_for(uint64_t bytes)
{
    if (!mixed) return bytes == 0 ? 0 : (bytes + msg_size - 1) / msg_size;
    uint64_t cyc = mixed_sizes[0] + mixed_sizes[1] + mixed_sizes[2];
    uint64_t n = 3 * (bytes / cyc), sum = (bytes / cyc) * cyc;
    while (sum < bytes) sum += mixed_sizes[n++ % 3];
    return n;
}

/* ------------------------------------------------------------ the pattern */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29; x *= 0x94D049BB133111EBull;
    x ^= x >> 32;
    return x;
}
static uint64_t pat_base(int src, int dst, uint64_t seq)
{
    return mix64(((uint64_t)(uint32_t)src << 44) ^ ((uint64_t)(uint32_t)dst << 24) ^
                 (seq * 0xD6E8FEB86659FD93ull) ^ 0x5bf03635ull);
}
#define GOLD 0x9E3779B97F4A7C15ull
/* word w of the message: base + (w+1)*GOLD, little endian: byte i of the
 * message is byte (i & 7) of word i / 8 */
static void fill(unsigned char *p, size_t n, int src, int dst, uint64_t seq)
{
    uint64_t base = pat_base(src, dst, seq), *w = (uint64_t *)p;
    size_t i, nw = n / 8;
    for (i = 0; i < nw; i++) w[i] = base + (i + 1) * GOLD;
    if (n & 7) {
        uint64_t x = base + (nw + 1) * GOLD;
        memcpy(p + nw * 8, &x, n & 7);
    }
}
/* returns the number of bad bytes; *first the offset of the first */
static size_t check(const unsigned char *p, size_t n, int src, int dst, uint64_t seq,
                    size_t *first, unsigned *exp, unsigned *got)
{
    uint64_t base = pat_base(src, dst, seq);
    const uint64_t *w = (const uint64_t *)p;
    size_t i, nw = n / 8, bad = 0;
    for (i = 0; i < nw; i++)
        if (w[i] != base + (i + 1) * GOLD) break;
    if (i == nw && !(n & 7)) return 0;
    /* slow path: count every bad byte from here on */
    for (size_t b = i * 8; b < n; b++) {
        uint64_t x = base + (b / 8 + 1) * GOLD;
        unsigned e = (unsigned)(x >> ((b & 7) * 8)) & 0xff;
        if (p[b] != e) {
            if (!bad) { *first = b; *exp = e; *got = p[b]; }
            bad++;
        }
    }
    return bad;
}

/* ------------------------------------------------------------ error names */
static const char *class_name(int c)
{
    static const struct { int c; const char *n; } t[] = {
#define E(x) { x, #x }
        E(MPI_SUCCESS), E(MPI_ERR_BUFFER), E(MPI_ERR_COUNT), E(MPI_ERR_TYPE),
        E(MPI_ERR_TAG), E(MPI_ERR_COMM), E(MPI_ERR_RANK), E(MPI_ERR_REQUEST),
        E(MPI_ERR_ROOT), E(MPI_ERR_GROUP), E(MPI_ERR_OP), E(MPI_ERR_TOPOLOGY),
        E(MPI_ERR_DIMS), E(MPI_ERR_ARG), E(MPI_ERR_UNKNOWN), E(MPI_ERR_TRUNCATE),
        E(MPI_ERR_OTHER), E(MPI_ERR_INTERN), E(MPI_ERR_IN_STATUS), E(MPI_ERR_PENDING),
        E(MPI_ERR_NO_MEM), E(MPI_ERR_UNSUPPORTED_OPERATION), E(MPI_ERR_RMA_CONFLICT),
#ifdef MPI_ERR_PROC_FAILED
        E(MPI_ERR_PROC_FAILED),
#endif
#ifdef MPI_ERR_PROC_FAILED_PENDING
        E(MPI_ERR_PROC_FAILED_PENDING),
#endif
#ifdef MPI_ERR_REVOKED
        E(MPI_ERR_REVOKED),
#endif
#undef E
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].c == c) return t[i].n;
    return "?";
}

/* ------------------------------------------------------------ streams */
typedef struct {
    int dir, peer, idx;     /* idx: first request slot */
    int dead;               /* hub mode: an MPI error on an operation with this peer */
    int done;
    uint64_t next;          /* next sequence number to post */
    uint64_t n_data;        /* data messages; UINT64_MAX while unknown */
    uint64_t n_end;         /* sequence numbers to post in all (data + empty); UINT64_MAX unknown */
    int outstanding;        /* posted data operations */
    int ctrl_recv_posted, ctrl_send_posted, ctrl_sent, ctrl_got;
    uint64_t ctrl_out, ctrl_in;  /* buffers of the control messages */
    uint64_t msgs, bytes, verified, corrupt, count_err, mpi_err;
    uint64_t late_ok;       /* hub mode: operations that completed without an error after the peer was declared dead */
    double first_error;     /* epoch */
} stream_t;

typedef struct { int stream, kind; uint64_t seq; unsigned char *buf; } slot_t;

static stream_t *st;
static int nst;
static MPI_Request *reqs;
static int *indices;
static MPI_Status *statuses;
static slot_t *slots;
static int nslots;
static double deadline;      /* monotonic, duration mode */
static int reports;

static void fatal_usage(const char *m)
{
    if (me == 0) fprintf(stderr, "stream: %s\n", m);
    MPI_Finalize();
    exit(64);
}

static uint64_t parse_size(const char *s)
{
    char *e;
    double v = strtod(s, &e);
    uint64_t m = 1;
    if (e == s || v < 0) fatal_usage("bad size");
    switch (*e) {
    case 'k': case 'K': m = 1ull << 10; e++; break;
    case 'm': case 'M': m = 1ull << 20; e++; break;
    case 'g': case 'G': m = 1ull << 30; e++; break;
    case 0: break;
    default: fatal_usage("bad size suffix");
    }
    if (*e == 'i' || *e == 'B') e++;
    if (*e == 'B') e++;
    if (*e) fatal_usage("bad size");
    return (uint64_t)(v * m);
}

static void report_error(stream_t *s, const char *op, uint64_t seq, int rc)
{
    char str[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = -1;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, str, &len);
    s->mpi_err++;
    if (!s->first_error) s->first_error = now_epoch();
    if (reports++ < 4 * max_reports || s->mpi_err == 1)
        printf("error rank=%d t=%.3f el=%.3f peer=%d op=%s seq=%" PRIu64 " rc=%d class=%d name=%s string=\"%s\"\n",
               me, now_epoch(), now_mono() - t0, s->peer, op, seq, rc, cls, class_name(cls), str);
    fflush(stdout);
    if (!s->dead) {
        s->dead = 1;
        if (hub)
            printf("dead rank=%d t=%.3f el=%.3f peer=%d dir=%s (no more operations posted to it)\n",
                   me, now_epoch(), now_mono() - t0, s->peer, s->dir == TX ? "tx" : "rx");
        fflush(stdout);
    }
}

static void post_data(stream_t *s, int slot)
{
    slot_t *sl = &slots[slot];
    uint64_t seq = s->next;
    int rc;
    sl->seq = seq;
    if (s->dir == TX) {
        size_t n = seq < s->n_data ? size_of(seq) : 0;
        fill(sl->buf, n, me, s->peer, seq);
        if (seq == inject_corrupt && n) sl->buf[n / 2] ^= 0x40;
        rc = MPI_Isend(sl->buf, (int)n, MPI_BYTE, s->peer, TAG_DATA, MPI_COMM_WORLD, &reqs[slot]);
    } else {
        rc = MPI_Irecv(sl->buf, (int)max_size(), MPI_BYTE, s->peer, TAG_DATA, MPI_COMM_WORLD, &reqs[slot]);
    }
    if (rc != MPI_SUCCESS) {
        reqs[slot] = MPI_REQUEST_NULL;
        report_error(s, s->dir == TX ? "send" : "recv", seq, rc);
        return;
    }
    s->next++;
    s->outstanding++;
}

static void post_ctrl_send(stream_t *s, uint64_t v, int tag)
{
    int slot = s->idx + window + 1, rc;
    s->ctrl_out = v;
    rc = MPI_Isend(&s->ctrl_out, 1, MPI_UINT64_T, s->peer, tag, MPI_COMM_WORLD, &reqs[slot]);
    if (rc != MPI_SUCCESS) { reqs[slot] = MPI_REQUEST_NULL; report_error(s, "ctrl", v, rc); return; }
    s->ctrl_send_posted = 1;
    s->ctrl_sent = 1;
}

/* posts what can be posted on stream s */
static void advance(stream_t *s)
{
    if (s->done || s->dead) return;
    if (s->dir == TX) {
        if (s->n_data == UINT64_MAX && now_mono() >= deadline) {
            /* duration over: tell the receiver how many data messages */
            s->n_data = s->next;
            post_ctrl_send(s, s->n_data, TAG_COUNT);
        }
    } else {
        if (s->n_data != UINT64_MAX && s->next >= s->n_data && !s->ctrl_sent) {
            /* every data message has a receive: say how many receives are posted */
            s->n_end = s->next;
            if (opt_duration > 0) post_ctrl_send(s, s->next, TAG_POSTED);
            else s->ctrl_sent = 1;
        }
    }
    for (int i = 0; i < window && !s->dead; i++) {
        int slot = s->idx + i;
        if (reqs[slot] != MPI_REQUEST_NULL) continue;
        if (s->dir == TX) {
            if (s->n_data == UINT64_MAX) { if (now_mono() >= deadline) break; }
            else if (s->n_end == UINT64_MAX ? s->next >= s->n_data : s->next >= s->n_end) break;
        } else {
            if (s->n_data != UINT64_MAX && s->next >= s->n_data) break;
        }
        post_data(s, slot);
    }
}

static int stream_finished(stream_t *s)
{
    for (int i = 0; i < window + 2; i++)
        if (reqs[s->idx + i] != MPI_REQUEST_NULL) return 0;
    if (s->dead) return 1;
    if (s->dir == TX) return s->n_end != UINT64_MAX && s->next >= s->n_end;
    return s->n_data != UINT64_MAX && s->ctrl_sent && s->next >= s->n_data;
}

static void on_complete(int slot, int rc, MPI_Status *status)
{
    slot_t *sl = &slots[slot];
    stream_t *s = &st[sl->stream];
    if (sl->kind == K_DATA) s->outstanding--;
    else if (sl->kind == K_CTRL_SEND) s->ctrl_send_posted = 0;
    else s->ctrl_recv_posted = 0;
    if (rc != MPI_SUCCESS) {
        report_error(s, sl->kind != K_DATA ? "ctrl" : s->dir == TX ? "send" : "recv", sl->seq, rc);
        return;
    }
    if (s->dead) { s->late_ok++; return; }   /* after the peer was declared dead: not counted */
    if (sl->kind == K_CTRL_SEND) return;
    if (sl->kind == K_CTRL_RECV) {
        if (s->dir == RX) s->n_data = s->ctrl_in;         /* the sender's count */
        else {                                            /* the receiver's posted receives */
            if (s->ctrl_in < s->n_data) {
                printf("count rank=%d peer=%d posted receives %" PRIu64 " < data messages %" PRIu64 "\n",
                       me, s->peer, s->ctrl_in, s->n_data);
                s->count_err++;
                s->ctrl_in = s->n_data;
            }
            s->n_end = s->ctrl_in;
        }
        s->ctrl_got = 1;
        return;
    }
    if (s->dir == TX) {
        if (sl->seq < s->n_data) { s->msgs++; s->bytes += size_of(sl->seq); }
        return;
    }
    /* a received message: source, tag, count, every byte */
    int cnt = -1;
    MPI_Get_count(status, MPI_BYTE, &cnt);
    size_t want = (s->n_data != UINT64_MAX && sl->seq >= s->n_data) ? 0 : size_of(sl->seq);
    if (status->MPI_SOURCE != s->peer || status->MPI_TAG != TAG_DATA) {
        s->count_err++;
        if (reports++ < max_reports)
            printf("count rank=%d peer=%d seq=%" PRIu64 " source=%d tag=%d (expected %d, %d)\n",
                   me, s->peer, sl->seq, status->MPI_SOURCE, status->MPI_TAG, s->peer, TAG_DATA);
        return;
    }
    if (cnt < 0 || (size_t)cnt != want) {
        s->count_err++;
        if (reports++ < max_reports)
            printf("count rank=%d peer=%d seq=%" PRIu64 " expected=%zu got=%d\n", me, s->peer, sl->seq, want, cnt);
        fflush(stdout);
        return;
    }
    if (want == 0) return;   /* an empty message closing a duration run */
    size_t first = 0;
    unsigned e = 0, g = 0;
    size_t bad = check(sl->buf, want, s->peer, me, sl->seq, &first, &e, &g);
    s->msgs++;
    s->bytes += want;
    if (bad) {
        s->corrupt++;
        if (reports++ < max_reports)
            printf("corrupt rank=%d peer=%d seq=%" PRIu64 " size=%zu offset=%zu expected=0x%02x got=0x%02x bad_bytes=%zu\n",
                   me, s->peer, sl->seq, want, first, e, g, bad);
        fflush(stdout);
    } else s->verified++;
}

static volatile sig_atomic_t finalize_rc;
static void on_alarm(int sig)
{
    (void)sig;
    char m[128];
    int n = snprintf(m, sizeof m, "finalize rank=%d: MPI_Finalize did not return within the timeout; exiting %d\n",
                     me, (int)finalize_rc);
    if (write(1, m, (size_t)n) < 0) { /* nothing to do */ }
    _exit(finalize_rc);
}

static void usage(void)
{
    if (me == 0)
        fprintf(stderr,
                "usage: stream [--size N[K|M|G]] [--mixed] [--window W] (--bytes B | --duration S)\n"
                "              [--bidir] [--hub] [--progress S] [--finalize-timeout S] [--quiet]\n"
                "              [--inject-corrupt SEQ]   (self-test: the sender flips a byte of message SEQ)\n"
                "  default: --size 4M --window 8 --bytes 1G, pairs (0,1),(2,3),...: even rank sends\n");
}

int main(int argc, char **argv)
{
    char host[256] = "?";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    gethostname(host, sizeof host - 1);
    setvbuf(stdout, NULL, _IOLBF, 0);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV() do { if (!v) { usage(); fatal_usage("missing value"); } i++; } while (0)
        if (!strcmp(a, "--size")) { NEEDV(); msg_size = parse_size(v); }
        else if (!strcmp(a, "--mixed")) mixed = 1;
        else if (!strcmp(a, "--window")) { NEEDV(); window = atoi(v); }
        else if (!strcmp(a, "--bytes")) { NEEDV(); opt_bytes = parse_size(v); }
        else if (!strcmp(a, "--duration")) { NEEDV(); opt_duration = atof(v); }
        else if (!strcmp(a, "--bidir")) bidir = 1;
        else if (!strcmp(a, "--hub")) hub = 1;
        else if (!strcmp(a, "--progress")) { NEEDV(); progress_every = atof(v); }
        else if (!strcmp(a, "--finalize-timeout")) { NEEDV(); finalize_timeout = atof(v); }
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (!strcmp(a, "--inject-corrupt")) { NEEDV(); inject_corrupt = strtoull(v, NULL, 10); }
        else { usage(); fatal_usage("unknown argument"); }
    }
    if (window < 1 || window > 1024) fatal_usage("--window 1..1024");
    if (msg_size < 1 || msg_size > (size_t)1 << 30) fatal_usage("--size 1..1G");
    if (!opt_bytes && opt_duration <= 0) opt_bytes = 1ull << 30;
    if (opt_bytes && opt_duration > 0) fatal_usage("--bytes or --duration, not both");
    if (!hub && np % 2) fatal_usage("pair mode needs an even number of ranks (or --hub)");
    if (hub && np < 2) fatal_usage("--hub needs 2 ranks or more");

    /* the streams of this rank */
    st = calloc(2 * (size_t)np, sizeof *st);
    if (hub) {
        if (me == 0)
            for (int p = 1; p < np; p++) {
                st[nst++] = (stream_t){ .dir = TX, .peer = p };
                st[nst++] = (stream_t){ .dir = RX, .peer = p };
            }
        else {
            st[nst++] = (stream_t){ .dir = TX, .peer = 0 };
            st[nst++] = (stream_t){ .dir = RX, .peer = 0 };
        }
    } else {
        int partner = me ^ 1;
        if (me % 2 == 0 || bidir) st[nst++] = (stream_t){ .dir = TX, .peer = partner };
        if (me % 2 == 1 || bidir) st[nst++] = (stream_t){ .dir = RX, .peer = partner };
    }
    nslots = nst * (window + 2);
    reqs = malloc(nslots * sizeof *reqs);
    indices = malloc(nslots * sizeof *indices);
    statuses = malloc(nslots * sizeof *statuses);
    slots = calloc(nslots, sizeof *slots);
    for (int k = 0; k < nst; k++) {
        stream_t *s = &st[k];
        s->idx = k * (window + 2);
        s->n_data = s->n_end = UINT64_MAX;
        if (opt_bytes) s->n_data = s->n_end = count_for(opt_bytes);
        for (int i = 0; i < window + 2; i++) {
            int sl = s->idx + i;
            reqs[sl] = MPI_REQUEST_NULL;
            slots[sl].stream = k;
            slots[sl].kind = i < window ? K_DATA : i == window ? K_CTRL_RECV : K_CTRL_SEND;
            if (i < window) {
                slots[sl].buf = aligned_alloc(64, (max_size() + 63) / 64 * 64);
                if (!slots[sl].buf) { fprintf(stderr, "stream: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 64); }
                memset(slots[sl].buf, 0, max_size());   /* touch the pages before the clock starts */
            }
        }
    }

    char len_s[64];
    if (opt_bytes) snprintf(len_s, sizeof len_s, "bytes=%" PRIu64, opt_bytes);
    else snprintf(len_s, sizeof len_s, "duration=%g", opt_duration);
    printf("start rank=%d size=%d pid=%d host=%s t=%.3f mode=%s%s size=%zu%s window=%d %s\n", me, np,
           (int)getpid(), host, now_epoch(), hub ? "hub" : "pair", bidir ? "+bidir" : "", max_size(),
           mixed ? "(mixed 8,64K,1M)" : "", window, len_s);
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) { printf("error rank=%d barrier rc=%d\n", me, rc); MPI_Abort(MPI_COMM_WORLD, 2); }
    t0 = now_mono();
    deadline = t0 + opt_duration;

    /* the receive of each control message is posted first (duration mode) */
    if (opt_duration > 0)
        for (int k = 0; k < nst; k++) {
            stream_t *s = &st[k];
            int sl = s->idx + window;
            rc = MPI_Irecv(&s->ctrl_in, 1, MPI_UINT64_T, s->peer, s->dir == RX ? TAG_COUNT : TAG_POSTED,
                           MPI_COMM_WORLD, &reqs[sl]);
            if (rc != MPI_SUCCESS) { reqs[sl] = MPI_REQUEST_NULL; report_error(s, "ctrl", 0, rc); }
            else s->ctrl_recv_posted = 1;
        }

    double last_print = t0;
    uint64_t last_bytes = 0;
    int running = nst;
    while (running) {
        for (int k = 0; k < nst; k++) advance(&st[k]);
        /* MPI_Testsome, not MPI_Testany: when requests fail, Open MPI's
         * Testany (and Waitany) reports the first one and frees every other
         * failed request of the array unreported; Testsome gives each
         * completed request its own status and error */
        int outcount = 0;
        rc = MPI_Testsome(nslots, reqs, &outcount, indices, statuses);
        if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
            /* an error not tied to a request */
            for (int k = 0; k < nst; k++) if (!st[k].dead && !st[k].done) { report_error(&st[k], "testsome", 0, rc); break; }
        } else if (outcount != MPI_UNDEFINED) {
            for (int j = 0; j < outcount; j++) {
                int idx = indices[j];
                reqs[idx] = MPI_REQUEST_NULL;   /* done (a failed request may be left set) */
                on_complete(idx, rc == MPI_ERR_IN_STATUS ? statuses[j].MPI_ERROR : MPI_SUCCESS, &statuses[j]);
            }
            for (int j = 0; j < outcount; j++) advance(&st[slots[indices[j]].stream]);
        }
        running = 0;
        for (int k = 0; k < nst; k++) {
            stream_t *s = &st[k];
            if (!s->done && stream_finished(s)) s->done = 1;
            if (!s->done) running++;
        }
        /* pair mode: an MPI error ends the run (what is left may never complete) */
        if (!hub)
            for (int k = 0; k < nst; k++) if (st[k].dead) running = 0;
        double t = now_mono();
        if (progress_every > 0 && (t - last_print >= progress_every || !running) && !quiet) {
            uint64_t rx = 0, tx = 0, rxm = 0;
            for (int k = 0; k < nst; k++) { rx += st[k].dir == RX ? st[k].bytes : 0; tx += st[k].dir == TX ? st[k].bytes : 0; rxm += st[k].dir == RX ? st[k].msgs : 0; }
            printf("progress rank=%d t=%.3f el=%.3f bytes=%" PRIu64 " rx_bytes=%" PRIu64 " tx_bytes=%" PRIu64
                   " rx_msgs=%" PRIu64 " MBps=%.0f%s\n", me, now_epoch(), t - t0, rx + tx, rx, tx, rxm,
                   (rx + tx - last_bytes) / (t - last_print) / 1e6, rx + tx == last_bytes && running ? " stalled" : "");
            last_print = t;
            last_bytes = rx + tx;
        }
    }
    double el = now_mono() - t0;

    uint64_t msgs = 0, bytes = 0, ver = 0, cor = 0, cnt = 0, merr = 0, txm = 0, txb = 0;
    int ndead = 0, live_err = 0;
    char dead[256] = "";
    for (int k = 0; k < nst; k++) {
        stream_t *s = &st[k];
        if (s->dir == RX) { msgs += s->msgs; bytes += s->bytes; ver += s->verified; }
        else { txm += s->msgs; txb += s->bytes; }
        cor += s->corrupt; cnt += s->count_err; merr += s->mpi_err;
        printf("peer rank=%d peer=%d dir=%s msgs=%" PRIu64 " bytes=%" PRIu64 " verified=%" PRIu64
               " corrupt=%" PRIu64 " count_errors=%" PRIu64 " mpi_errors=%" PRIu64 " late_ok=%" PRIu64 " state=%s\n",
               me, s->peer, s->dir == TX ? "tx" : "rx", s->msgs, s->bytes, s->verified, s->corrupt,
               s->count_err, s->mpi_err, s->late_ok, s->dead ? "dead" : s->done ? "done" : "unfinished");
        if (s->dead) {
            int seen = 0;
            for (int j = 0; j < k; j++) if (st[j].dead && st[j].peer == s->peer) seen = 1;
            if (!seen) {
                ndead++;
                snprintf(dead + strlen(dead), sizeof dead - strlen(dead), "%s%d", strlen(dead) ? "," : "", s->peer);
            }
        }
    }
    /* hub mode: every stream with a peer that died must have ended with an
     * MPI error, every other one must be complete */
    if (hub)
        for (int k = 0; k < nst; k++) if (!st[k].dead && !st[k].done) live_err++;
    uint64_t errors = cor + cnt + merr;
    int exit_rc = (cor || cnt) ? 1 : (merr && !hub) || live_err || (hub && me != 0 && merr) ? 2 : 0;
    printf("{\"summary\":1,\"rank\":%d,\"size\":%d,\"mode\":\"%s\",\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64
           ",\"verified\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"corrupt\":%" PRIu64 ",\"count_errors\":%" PRIu64
           ",\"mpi_errors\":%" PRIu64 ",\"tx_messages\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
           ",\"dead_peers\":[%s],\"elapsed_s\":%.3f,\"MBps\":%.0f,\"t\":%.3f,\"exit\":%d}\n",
           me, np, hub ? "hub" : "pair", msgs, bytes, ver, errors, cor, cnt, merr, txm, txb, dead, el,
           (bytes + txb) / (el > 0 ? el : 1) / 1e6, now_epoch(), exit_rc);
    fflush(stdout);
    (void)ndead;
    if (exit_rc == 2 && !hub) MPI_Abort(MPI_COMM_WORLD, 2);   /* what is pending may never complete */
    /* MPI_Finalize with a dead peer may hang: bounded */
    finalize_rc = exit_rc;
    signal(SIGALRM, on_alarm);
    if (finalize_timeout > 0) alarm((unsigned)(finalize_timeout + 0.999));
    MPI_Finalize();
    alarm(0);
    printf("finalized rank=%d t=%.3f\n", me, now_epoch());
    return exit_rc;
}
