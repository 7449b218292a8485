// SPDX-License-Identifier: BSD-3-Clause
/* bfo_net.h - one engine over every rail a process has, whatever carries
 * it: the one owner of an engine in bfo's backends, and the API that
 * tools, examples and an MPI layer use.
 *
 * Part of bfo (see bfo.h).  bfo_net keeps a table of transports
 * (bfo_transport.h: TCP, verbs, shared memory), each one row.  It numbers
 * the rails as they are listed and maps each engine rail to (transport,
 * that transport's rail): posts go down to the transport that owns the
 * rail, completions, frames, rail events and "heard from the peer" come up
 * through the transport's sink and reach the engine renumbered; tokens pass
 * through unchanged.  RDMA (post_write, post_read, reg_mem) goes to the
 * transports whose rails claim BFO_CAP_RDMA; the engine falls back to its
 * copy protocols on the others.
 *
 * USE
 *   bfo_net *n;  bfo_net_init(&n, &cfg, &opt);   // wire-up from the
 *   bfo_engine *e = bfo_net_engine(n);           // environment (bfo_boot.h)
 *   ... bfo_isend(e, ...) ...
 *   while (!bfo_test(&req)) bfo_net_progress(n, 1);
 *   bfo_net_fini(n);
 * An MPI layer gives its own publish and lookup (its modex) instead:
 *   bfo_boot *b;  bfo_boot_custom(&b, rank, size, job, &ops);
 *   bfo_net_init_boot(&n, &cfg, &opt, b);        // n owns b from here
 *
 * RAILS.  opt->rails, else BFO_RAILS, else 127.0.0.1: a comma-separated
 *   list; each name is claimed by one transport (`tcp:ADDR` or a bare
 *   address, `tcp:[IPV6]`; `verbs:DEVICE[:PORT][@ADDR]`; `shm`).  The same
 *   shape on every rank: rail i of one rank reaches rail i of the others.
 *   A name no transport of this build claims is refused at init
 *   (BFO_ERR_INVALID, said on stderr).  "-" (BFO_NET_RAIL_ABSENT) holds
 *   a rail's place on a rank that has no rail there (a host without that
 *   network: bfo_railsel.h): its card says so, and that rail reaches no
 *   peer from it or to it (RAIL_ABSENT); a list needs one rail that is not
 *   "-".
 *
 * WIRE-UP.  Each rank publishes one card (bfo_boot_publish): for every
 *   rail, its transport's name and the address the transport gives, and
 *   the rank's public key (AUTHENTICATION).  A
 *   transport looks a peer's address up when it first needs it (to dial);
 *   bfo_net reads the peer's card then (bfo_boot_lookup) and keeps what it
 *   read.  With a wire-up whose cards are found only after a later fence
 *   of the caller's (bfo_boot_ops.lookup_later: Open MPI's modex), the
 *   engine's connects at init wait for the first bfo_net_progress: call it
 *   once the fence is done.  A peer whose rail i is of another transport than ours is told
 *   as such to the transport (no address), not taken for a failure of the
 *   card.  One job id (from bfo_boot) goes into every transport's hellos.
 *
 * AUTHENTICATION (docs/failure-model.md, "Threat model").  Each rank has
 *   its keys (bfo_auth.h): an X25519 key pair made at init, its public key
 *   in its card, and the job's membership key: opt->auth_key (an embedding
 *   layer's), else the wire-up's (bfo_boot_auth: BFO_AUTH_FD from `bfo
 *   run`, or BFO_AUTH_KEYFILE, under BFO_BOOTSTRAP or PMIx), else none
 *   (all zeroes): then the pair keys rest on the public keys the cards
 *   carry, as authentic as the caller's modex or PMIx that carries them;
 *   under BFO_BOOTSTRAP with no key nothing is authenticated, and rank 0
 *   says so on stderr once at start, with how to give one.  A peer's
 *   pair key is derived (bfo_auth_set_peer, about 100 us) when its card is
 *   first read: the first time a connection or a beacon needs the peer,
 *   never for every peer at init.  The TCP transport gets the keys in its
 *   options (bfo_tcp_options.auth, and auth_peer: a hello from a peer
 *   whose card was not read yet reads it): its connections are taken only
 *   at the handshake's proof (bfo_tcp.h, WIRE; the conn machine's claims
 *   and proofs) and its beacons are MACed (BEACONS); the shm transport's
 *   connections too (bfo_shm_options.auth, auth_peer: bfo_shm.h,
 *   AUTHENTICATION), and the verbs transport's (bfo_verbs_options.auth,
 *   auth_peer: bfo_verbs.h, AUTHENTICATION; not over its TCP exchange).
 *   BFO_AUTH=off gives TCP, shm and verbs no keys (hellos and beacons as
 *   before issue 37), said on stderr by every rank.  Per peer: 32 bytes of public key in its card, and in
 *   bfo_auth 64 bytes (public key, replay window, send sequence) and the
 *   32-byte pair key, allocated at init.
 *
 * STANDBY RAILS.  cfg->standby_rails, else BFO_STANDBY_RAILS (rail
 *   indices, comma-separated: 1 makes rail 1 a standby): a standby rail
 *   carries probes only while a rail not among them is UP, and data when
 *   none is (active-standby; docs/engine-design.md, "Striping by measured
 *   rate").  A bad list: BFO_ERR_INVALID, said on stderr.
 *
 * EAGER LIMIT.  cfg->eager_limit, else BFO_EAGER_LIMIT (bytes, or with a
 *   K, M or G suffix: 64K; 1 B to BFO_NET_EAGER_MAX), else the eager
 *   limit of the transport that carries every rail when there is one
 *   (its row's eager_limit: 64 KiB for TCP, BFO_TCP_EAGER_LIMIT), else the
 *   engine's default (4 KiB: shared memory and verbs rails, and lists that
 *   mix transports).  Messages up to it go in one MATCH, larger ones as a
 *   rendezvous (three one-way trips over a copy rail: RNDV with the first
 *   eager_limit bytes, ACK, FRAGs), so over TCP the latency just above it
 *   is about two small-frame trips more than just below (64K suits TCP:
 *   docs/engine-design.md, "Latency across the eager limit", has the
 *   `bfo bench --latency` figures).  It also sizes the
 *   engine's unexpected-message buffers (max_unexpected of them) and the
 *   transports' largest frame.  Ranks may differ: a receiver takes eager
 *   payloads up to the larger of its eager_limit and frag_size, and
 *   credits bound what a peer holds there.  A malformed
 *   value: BFO_ERR_INVALID, said on stderr.
 *
 * PROGRESS.  bfo_net_progress polls every transport, then runs the
 *   engine's timers (every 20 us of busy polling, and before sleeping).
 *   With timeout_ms > 0 and nothing to do, it asks each transport for the
 *   fds that wake it (wait_fds: a transport with work left says so, and
 *   nobody sleeps) and sleeps in one poll() on all of them.  Right after
 *   a busy call that found nothing (under 20 us ago) a sleeping call
 *   does not poll the transports again first: it goes to wait_fds.
 *
 * LEAVING.  A rank that finishes says goodbye: bfo_net_leave (or
 *   bfo_net_fini, which does it first) posts a BYE on every rail to every
 *   peer (bfo_engine_leave) and progresses until each is delivered or
 *   failed, 500 ms at most (BFO_NET_LEAVE_MS), then the transports close.
 *   A peer that took the BYE takes those connections closing as no
 *   failure: no map-out, no reconnect, nothing on stderr at the default
 *   log level (bfo_backend.part tells its transports), and its requests to
 *   this rank fail with BFO_ERR_PEER_LEFT.  An MPI layer leaves at
 *   MPI_Finalize (bfo_net_fini does).
 *
 * MEMORY.  The engine's pools start at the sizes of the bfo_config given
 *   and grow in chunks as the program needs (bfo_config.grow: malloc,
 *   freed by bfo_net_fini), unless the caller gives its own grow; the
 *   payloads of unexpected messages stay within unexpected_budget, or
 *   BFO_UNEXPECTED_BUDGET (bytes, K or M) when the configuration leaves it
 *   0 (past it, a frame waits in its transport: back-pressure).
 *
 * STATISTICS.  bfo_net_get_stats: per engine rail, in one shape
 *   (bfo_rail_stats: frames, bytes, connects, conn_errors, ...), and how
 *   often the progress thread ran.  What one transport alone counts is in
 *   bfo_rail_stats.tp, found by name: bfo_net_rail_counter (its names:
 *   bfo_net_rail_counters, bfo_net_counters).
 *
 * THREADS.  The engine is not thread-safe; bfo_net can be.
 *   thread_safe (an option): callers on several threads at once (what
 *     MPI_THREAD_MULTIPLE needs).  One lock around every bfo_net entry;
 *     use bfo_net_isend, bfo_net_irecv and bfo_net_test (each takes it),
 *     or call the engine's own functions between bfo_net_lock and
 *     bfo_net_unlock.  bfo_net_progress takes it too and lets it go while
 *     it sleeps.  The lock is recursive: any bfo_net call may be made with
 *     it held (bfo_net_progress then sleeps holding it).  Without the option
 *     the lock is a no-op: one thread, or the caller's own lock.
 *   progress_thread (an option, else BFO_PROGRESS_THREAD=1; default off):
 *     a thread that keeps this process answering while the caller
 *     computes.  When the caller has not called bfo_net_progress for a
 *     quarter of probe_timeout (1 to 10 ms), it takes the lock (never
 *     waiting for it) and runs the transports with rail control only:
 *     PROBE and PROBEACK reach the engine and are answered; every other
 *     frame is refused as back-pressure (the transport tells the peer it
 *     is stalled, which keeps the peer's probes waiting); completions and
 *     rail events wait, in order, for the caller's next bfo_net_progress.
 *     It runs no engine timer and completes no request: requests complete
 *     only in the caller's progress calls.  It turns the lock on, so
 *     with it the caller's own engine calls go through bfo_net_isend,
 *     bfo_net_irecv, bfo_net_test or under bfo_net_lock.
 *   A peer that computes without it is kept up by its host's evidence
 *   (docs/engine-design.md, "The failure detector"); the thread is for
 *   transports without such evidence (verbs, for now) and for callers who
 *   want their process itself to answer.
 *
 * LIMITS.  Before any transport opens, the process's limits on open files
 *   (RLIMIT_NOFILE) and locked memory (RLIMIT_MEMLOCK, only when a
 *   transport pins memory, and not with CAP_IPC_LOCK) are checked against
 *   what the job may hold: each transport's row says what it holds per
 *   peer per rail, per rail and once (bfo_transport_need), summed over the
 *   rail list for this job's size, plus the descriptors open now and 32
 *   spare.  An upper bound: every peer connected on every rail (shm: the
 *   peers on this host, OMPI_COMM_WORLD_LOCAL_SIZE when set, else all).
 *   A soft limit below it is raised to it where the hard limit allows
 *   (said at log level 1); a hard limit below it is said in one message
 *   (the limit, the need and how it was counted, what to set) and init
 *   fails with BFO_ERR_INVALID (limits BFO_NET_LIMITS_FAIL, the default),
 *   or goes on (BFO_NET_LIMITS_WARN); BFO_NET_LIMITS_OFF looks at nothing.
 *   The hard limit is never raised.  From the environment: BFO_LIMITS=
 *   fail, warn or off (backends/net/bfo_limits.h).
 *
 * ENVIRONMENT.  What the options and cfg leave 0 (unset) is taken from
 *   the environment: BFO_RAILS, BFO_EAGER_LIMIT, BFO_UNEXPECTED_BUDGET,
 *   BFO_STANDBY_RAILS, BFO_RELAY, BFO_CONNECT_AT_INIT (1: every rail to
 *   every peer asked at init, bfo_config.connect_at_init; by default a
 *   peer's rails connect when it is first needed), BFO_PROGRESS_THREAD,
 *   BFO_LIMITS, the log levels
 *   BFO_<NAME>_LOG (NET, TCP, SHM, VERBS), and every transport's settings
 *   as BFO_<TRANSPORT>_<NAME> (its table, bfo_setting.h: BFO_TCP_BEACON_MS,
 *   BFO_TCP_NOTSENT_LOWAT, ...; `bfo run --settings` lists them all); the
 *   transports read none themselves.  A malformed value of any of them is
 *   refused (BFO_ERR_INVALID, said on stderr), never taken as 0.  With no_env (an
 *   option) none of them is read: a setting the caller leaves 0 takes its
 *   built-in default, and a bad value in the environment is no error.  A
 *   layer with its own settings system (pml/bfo: MCA parameters) says so,
 *   since a variable set on one host only would make its ranks differ
 *   (relay must match on every rank).  The wire-up of bfo_net_init
 *   (bfo_boot_env: BFO_RANK, BFO_SIZE, BFO_BOOTSTRAP, BFO_LAUNCHER_FD,
 *   PMIx's) is not a setting and is read either way; bfo_net_init_boot
 *   with bfo_boot_custom reads none of it.
 *
 * ERRORS: BFO_OK; BFO_ERR_INVALID (a bad rail list or setting, said on
 *   stderr); BFO_ERR_NO_MEMORY; BFO_BOOT_ERR_EXCHANGE (the wire-up failed);
 *   a transport's own (BFO_TCP_ERR_SOCKET, BFO_VERBS_ERR_*, BFO_SHM_ERR_*;
 *   a transport of the caller's, once a bfo_net_init was given it); an
 *   engine init error.  bfo_net_errname names every one.
 */
#ifndef BFO_NET_H
#define BFO_NET_H

#include <stdio.h>

#include "bfo_boot.h"
#include "bfo_engine.h"
#include "bfo_shm.h"
#include "bfo_tcp.h"
#include "bfo_transport.h"
#include "bfo_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest BFO_EAGER_LIMIT taken (64 MiB). */
#define BFO_NET_EAGER_MAX (64 << 20)
/* The eager limit when every rail is TCP and neither cfg->eager_limit nor
 * BFO_EAGER_LIMIT sets one (EAGER LIMIT above): the TCP row's, kept under
 * this name for the programs that use it. */
#define BFO_NET_TCP_EAGER_LIMIT BFO_TCP_EAGER_LIMIT
/* How long bfo_net_fini waits for this rank's BYEs at most (LEAVING above). */
#define BFO_NET_LEAVE_MS 500

typedef struct bfo_net_options {
    const char *rails;          /* the rail list (NULL: BFO_RAILS, else 127.0.0.1) */
    unsigned rail_bandwidth[BFO_MAX_RAILS]; /* MB/s per engine rail (0: the transport's figure, if any) */
    uint64_t bootstrap_timeout_ns; /* the wire-up through BFO_BOOTSTRAP or PMIx (0: 30 s) */
    int log_level;              /* every transport's (0: BFO_<NAME>_LOG, else 1: errors) */
    bfo_tcp_options tcp;        /* each transport's own options (zero: defaults); set by name with
                                 * bfo_net_options_set, which knows them from the transports' tables */
    bfo_verbs_options verbs;
    bfo_shm_options shm;
    /* More transports, asked before the built-in ones whether they claim a
     * rail (a transport of the caller's, a test's fake): a NULL-terminated
     * list, and each one's options in transport_opts[i] (the list may be
     * NULL, an entry NULL). */
    const bfo_transport_ops *const *transports;
    const void *const *transport_opts;
    int thread_safe;      /* 1: calls from several threads at once (THREADS above) */
    int progress_thread;  /* 1: the progress thread; -1: never; 0: BFO_PROGRESS_THREAD=1, else off */
    int leave_ms;         /* bfo_net_fini leaves first (bfo_net_leave) and waits this long at
                           * most for its BYEs (0: BFO_NET_LEAVE_MS); -1: it does not leave
                           * (a test playing a rank that dies) */
    /* Appended last, as every new field is: a caller that zeroes the struct
     * (memset, = { 0 }) before setting what it knows keeps the behaviour it
     * had, and the fields before keep their offsets. */
    int no_env;           /* 1: read no BFO_* variable: every setting comes from these options
                           * and cfg (ENVIRONMENT above); 0: the variables fill what they leave 0 */
    int limits;           /* LIMITS above: BFO_NET_LIMITS_FAIL, _WARN or _OFF (0: BFO_LIMITS, else fail) */
    /* Each engine rail's name, the same on every rank: the network it is on
     * (bfo_railsel's slots), said in logs and dumps and by
     * bfo_net_rail_name (NULL, or a NULL entry: the list's entry) */
    const char *const *rail_names;
    /* AUTHENTICATION: the job's membership key, BFO_AUTH_KEY_LEN (32)
     * bytes, the same on every rank (an embedding layer's: copied at init,
     * the caller wipes its own); NULL: the wire-up's (BFO_AUTH_FD,
     * BFO_AUTH_KEYFILE), else none */
    const uint8_t *auth_key;
} bfo_net_options;

/* bfo_net_options.limits (LIMITS above) */
#define BFO_NET_LIMITS_FAIL 1
#define BFO_NET_LIMITS_WARN 2
#define BFO_NET_LIMITS_OFF (-1)

typedef struct bfo_net_stats {
    bfo_rail_stats rail[BFO_MAX_RAILS]; /* per engine rail */
    uint64_t thread_rounds; /* the progress thread ran the transports (the caller computing) */
} bfo_net_stats;

typedef struct bfo_net bfo_net;

/* Wire-up from the environment (bfo_boot_env), the transports opened, the
 * card published, the engine set up with cfg (rank, nranks and nrails are
 * filled in).  opt may be NULL.  A macro: it passes the layout the caller
 * was compiled with (BFO_ABI_HERE; BFO_MAX_RAILS and the other options that
 * change bfo_engine), and a library built with another is refused with
 * BFO_ERR_ABI, said on stderr, before anything is set up: the engine it
 * returns is used by the caller's inline code. */
#define bfo_net_init(out, cfg, opt) bfo_net_init_abi((out), (cfg), (opt), BFO_ABI_HERE)
/* The same with the caller's wire-up (bfo_boot_custom); n owns boot from
 * here, even when it fails. */
#define bfo_net_init_boot(out, cfg, opt, boot) bfo_net_init_boot_abi((out), (cfg), (opt), (boot), BFO_ABI_HERE)
int bfo_net_init_abi(bfo_net **out, const bfo_config *cfg, const bfo_net_options *opt, const bfo_abi *caller);
int bfo_net_init_boot_abi(bfo_net **out, const bfo_config *cfg, const bfo_net_options *opt, bfo_boot *boot,
                          const bfo_abi *caller);
/* Polls every transport, runs the engine's timers; sleeps up to timeout_ms
 * when nothing was to be done.  Returns the number of things handled. */
int bfo_net_progress(bfo_net *n, int timeout_ms);
/* THREADS above: the lock (a no-op unless thread_safe or the progress
 * thread is on), and the engine's calls under it, with now =
 * bfo_net_now().  bfo_net_progress_thread: 1 when the thread runs. */
void bfo_net_lock(bfo_net *n);
void bfo_net_unlock(bfo_net *n);
int bfo_net_isend(bfo_net *n, bfo_request *r, const void *buf, size_t len, int peer, int ctx, int tag);
int bfo_net_irecv(bfo_net *n, bfo_request *r, void *buf, size_t cap, int peer, int ctx, int tag);
int bfo_net_test(bfo_net *n, const bfo_request *r);
int bfo_net_progress_thread(const bfo_net *n);
bfo_engine *bfo_net_engine(bfo_net *n);
int bfo_net_rank(const bfo_net *n);
int bfo_net_size(const bfo_net *n);
int bfo_net_nrails(const bfo_net *n);
/* The name of the transport that carries an engine rail ("tcp", "verbs",
 * "shm"), or NULL for a rail out of range. */
const char *bfo_net_rail_transport(const bfo_net *n, int rail);
/* Rail rail's name (bfo_net_options.rail_names, else its entry in the rail
 * list: "10.1.0.5", "shm", "-"), or NULL outside the rails. */
const char *bfo_net_rail_name(const bfo_net *n, int rail);
const bfo_net_stats *bfo_net_get_stats(bfo_net *n);
/* The counters of its own that the transport of an engine rail keeps
 * (bfo_rail_stats.tp[i] is the one named counters[i].name), *count of
 * them; NULL and 0 for a rail out of range or a transport that keeps none. */
const bfo_counter_desc *bfo_net_rail_counters(const bfo_net *n, int rail, int *count);
/* The rail's counter of that name as it stands now (bfo_net_get_stats):
 * BFO_OK and *value, or BFO_ERR_INVALID (*value 0) when the rail is out of
 * range or its transport keeps no counter of that name
 * (bfo_net_rail_counter(n, 0, "beacons_sent", &v): TCP's beacons). */
int bfo_net_rail_counter(bfo_net *n, int rail, const char *name, uint64_t *value);
/* buf[0..len) went back to the system (unmapped, trimmed), or is about to:
 * every transport drops the registrations it keeps of that memory
 * (bfo_transport_ops.mem_released; verbs caches them), so that RDMA never
 * reaches the pages that were there once new memory is mapped at that
 * address.  THE RULE for a layer that keeps the verbs registration cache
 * on (bfo_verbs_options.reg_cache >= 0, the default): call this from the
 * memory-release hook of its allocator before the memory is reused
 * (pml/bfo: Open MPI's opal_mem_hooks_register_release), or turn the
 * cache off (reg_cache = -1).  Safe from inside munmap/free hooks in any
 * thread: it takes no lock of bfo_net's, allocates nothing and does not
 * deregister there (that happens at the next registration, deregistration
 * or progress).  A region still in use then (a buffer freed under a
 * request: the program's error) is never handed out again.  Not during or
 * after bfo_net_fini. */
void bfo_net_mem_released(bfo_net *n, const void *buf, size_t len);
/* The engine's rails per peer and every transport's connections, one line
 * each, for a tool that timed out. */
void bfo_net_dump(bfo_net *n, FILE *f);
/* Test hook: the transport's fault hook on an engine rail (a TCP rail drops
 * every frame silently while on; a verbs rail has its queue pairs moved to
 * the error state, once). */
void bfo_net_fault_drop(bfo_net *n, int rail, int on);
/* This rank leaves (LEAVING above): bfo_engine_leave, then progress until
 * every BYE is out (bfo_engine_left) or timeout_ms passed.  Returns BFO_OK
 * (every BYE delivered or failed), BFO_ERR_AGAIN (the timeout came first:
 * a peer that did not take it takes the close as a failure, as before) or
 * BFO_ERR_INVALID (no engine).  Requests pending then fail (BFO_ERR_LEFT);
 * new ones fail at once.  Call bfo_net_fini next. */
int bfo_net_leave(bfo_net *n, int timeout_ms);
/* The peer's process is dead, on the caller's word (its runtime's event, an
 * agreement): bfo_peer_failed on the engine (docs/failure-model.md).  Under
 * `bfo run` there is no need: the launcher's reports (BFO_LAUNCHER_FD,
 * backends/boot/bfo_boot.h) are read at every progress, a millisecond
 * apart at most while busy polling, and a report wakes a progress that
 * sleeps.  Returns what bfo_peer_failed returns. */
int bfo_net_peer_failed(bfo_net *n, int peer);
/* Leaves first, unless done (bfo_net_leave, BFO_NET_LEAVE_MS, or
 * bfo_net_options.leave_ms), then closes every connection, frees
 * everything. */
void bfo_net_fini(bfo_net *n);
/* CLOCK_MONOTONIC in nanoseconds: the `now` the engine takes. */
uint64_t bfo_net_now(void);
/* Counts the rails of a list ("verbs:rxe0,tcp:10.0.2.1,shm"), or -1 when
 * no transport of this build claims an entry (said on stderr when verbose). */
int bfo_net_check_rails(const char *list);
/* What the transports of a rail list want of the engine's sizes (their
 * rows' eager_limit and tuning, bfo_transport.h), for a layer that sets
 * the engine's configuration per transport before bfo_net_init (pml/bfo).
 * Each 0: the engine's default. */
typedef struct bfo_net_tuning {
    size_t eager_limit;    /* what bfo_net gives the engine when neither cfg nor BFO_EAGER_LIMIT
                            * sets one (EAGER LIMIT above) */
    size_t frag_size;      /* the transport's when it carries every rail */
    size_t rdma_min;       /* the transport's when it is the only one in use that does RDMA */
    size_t rdma_frag_size; /* the same */
    int mem_release;       /* 1: a transport in use keeps registrations beyond a request: call
                            * bfo_net_mem_released from the allocator's release hooks, or turn
                            * them off (bfo_net_options_uncached) */
} bfo_net_tuning;
/* *out for the list (rails of this build's transports).  Returns the
 * number of rails, or -1 as bfo_net_check_rails (*out zeroed). */
int bfo_net_rail_tuning(const char *list, bfo_net_tuning *out);
/* For a caller that cannot call bfo_net_mem_released: every transport of
 * the list that keeps registrations beyond a request is set to keep none
 * (its cache setting "off" in opt).  Returns how many were, or -1 for a
 * bad list. */
int bfo_net_options_uncached(bfo_net_options *opt, const char *list);
/* The transports this build has, as a list ("tcp, verbs, shm"). */
const char *bfo_net_transports(void);
/* The tunables of the i-th transport of this build (i from 0; bfo_setting.h):
 * its table, *transport its name, *n its rows; NULL past the last.  What
 * `bfo run --settings` lists and pml/bfo registers as MCA parameters. */
const bfo_setting *bfo_net_settings(int i, const char **transport, int *n);
/* The name of the i-th transport of this build (i from 0; NULL past the
 * last), *counters the counters of its own it keeps
 * (bfo_transport_ops.counters), *n of them (NULL and 0: none). */
const char *bfo_net_counters(int i, const bfo_counter_desc **counters, int *n);
/* A transport's setting in opt (the member of its options in
 * bfo_net_options) from its text, by the transport's table: BFO_OK, or
 * BFO_ERR_INVALID with why (no such transport or setting, or a value that
 * is not one of it: bfo_setting_parse).  Whatever the caller sets this way
 * wins over the environment, as every option does. */
int bfo_net_options_set(bfo_net_options *opt, const char *transport, const char *name, const char *value,
                        char *why, size_t cap);
const char *bfo_net_errname(int rc);

/* The card a rank publishes (bfo_boot_publish), for a program that takes
 * part in the wire-up without a bfo_net (a test's misbehaving rank):
 *   u32 BFO_NET_CARD_MAGIC, u8 number of rails, then per rail u8 length
 *   and the transport's name, u8 length and the transport's address.
 * bfo_net_card_write returns the card's length (0: it does not fit);
 * bfo_net_card_read the number of rails, or -1 for a broken card. */
#define BFO_NET_CARD_MAGIC 0xBF0CA7D1u
#define BFO_NET_NAME_MAX 16
/* A rail list's entry, and a card's transport, for "no rail here". */
#define BFO_NET_RAIL_ABSENT "-"
size_t bfo_net_card_write(uint8_t *card, size_t cap, int nrails, const char *const *transport,
                          const bfo_addr *addr);
int bfo_net_card_read(const uint8_t *card, size_t len, char (*transport)[BFO_NET_NAME_MAX], bfo_addr *addr);
/* The same with the rank's public key (AUTHENTICATION above) after the
 * rails: u8 BFO_NET_CARD_KEY_LEN, then the key; pk NULL writes none.
 * Reading, *has_pk says whether the card has one (pk and has_pk may be
 * NULL); bfo_net_card_read takes a card with or without. */
#define BFO_NET_CARD_KEY_LEN 32
size_t bfo_net_card_write_key(uint8_t *card, size_t cap, int nrails, const char *const *transport,
                              const bfo_addr *addr, const uint8_t *pk);
int bfo_net_card_read_key(const uint8_t *card, size_t len, char (*transport)[BFO_NET_NAME_MAX], bfo_addr *addr,
                          uint8_t *pk, int *has_pk);
/* This rank's keys (bfo_auth.h; AUTHENTICATION above): for a transport
 * of the caller's, and tests.  Owned by n. */
struct bfo_auth *bfo_net_auth(const bfo_net *n);

#ifdef __cplusplus
}
#endif
#endif /* BFO_NET_H */
