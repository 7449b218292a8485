/* bfo_net.h - one engine over every rail a process has: TCP rails, verbs
 * rails, or both at once (a rail multiplexer).
 *
 * Part of bfo (see bfo.h).  The engine takes one bfo_backend; bfo_net is
 * that backend when rails of different transports reach the same peer.  It
 * numbers the rails as BFO_RAILS lists them and maps each engine rail to
 * (transport, that transport's rail): posts go down to the transport that
 * owns the rail, completions, frames and rail events come up renumbered;
 * tokens pass through unchanged.  RDMA (post_write, post_read, reg_mem)
 * goes to the verbs transport; TCP rails claim no BFO_CAP_RDMA, so the
 * engine falls back to its copy protocols when every verbs rail is lost,
 * and uses the verbs rails again once they are re-admitted.
 *
 * With TCP rails only, bfo_net is bfo_tcp itself (its own engine, nothing
 * in between): `bfo stream` behaves exactly as before.
 *
 * USE (as bfo_tcp)
 *   bfo_net *n;  bfo_net_init(&n, &cfg, &opt);   // BFO_RANK/BFO_SIZE/
 *   bfo_engine *e = bfo_net_engine(n);           // BFO_BOOTSTRAP or PMIx,
 *   ... bfo_isend(e, ...) ...                    // and BFO_RAILS
 *   while (!bfo_test(&req)) bfo_net_progress(n, 1);
 *   bfo_net_fini(n);
 *
 * RAILS.  BFO_RAILS=verbs:rxe0,verbs:rxe1,tcp:10.0.2.1 (the same shape on
 *   every rank: rail i of one rank reaches rail i of the others).  A TCP
 *   rail is `tcp:ADDR` or a bare IPv4 address; a verbs rail is
 *   `verbs:DEVICE[:PORT][@ADDR]` (bfo_verbs.h).  Without libibverbs at
 *   build time a verbs rail is refused at init (BFO_ERR_INVALID, said on
 *   stderr).
 *
 * WIRE-UP.  One exchange for every rail: each rank gives an address per
 *   rail (the TCP listen address; the verbs control channel's address) and
 *   gets everyone's, through BFO_BOOTSTRAP (bfo_tcp_bootstrap) or PMIx
 *   (under mpirun), with one job id for both transports.
 *
 * TRANSPORTS.  The TCP rails are one bfo_tcp under a sink
 *   (bfo_tcp_init_sink, bfo_tcp.h), the verbs rails one bfo_verbs
 *   (bfo_verbs_start); both report to bfo_sink.h callbacks here, which
 *   call the engine with its rail numbers (bfo_engine_completion, _frame,
 *   _rail_event, and _rail_heard for TCP's acks and keepalives).
 *
 * PROGRESS.  bfo_net_progress polls every transport (TCP with timeout 0:
 *   busy links are read directly, bfo_tcp.h), then runs the engine's
 *   timers; with timeout_ms > 0 and nothing to do it puts the busy TCP
 *   links back into the epoll set (bfo_tcp_prepare_sleep; it does not
 *   sleep when TCP has work left) and sleeps in poll() on the TCP epoll
 *   set, the verbs completion channels and the control sockets together,
 *   so either transport wakes it.
 *
 * STATISTICS.  bfo_net_get_stats: per engine rail, in the TCP backend's
 *   shape (frames, bytes, connects, conn_errors, ...).  For a verbs rail:
 *   bytes_tx counts sent frames' bytes plus RDMA bytes this rank moved,
 *   conn_errors the queue pairs lost.
 */
#ifndef BFO_NET_H
#define BFO_NET_H

#include "bfo_engine.h"
#include "bfo_tcp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bfo_net_options {
    bfo_tcp_options tcp;       /* rails and rail_bandwidth are ignored in a mix */
    int verbs_retry_cnt;       /* bfo_verbs_options (0: defaults) */
    int verbs_timeout;
    int verbs_recv_depth, verbs_send_depth, verbs_reg_cache;
    uint64_t verbs_connect_timeout_ns;
    unsigned rail_bandwidth[BFO_MAX_RAILS]; /* MB/s per engine rail (0: equal) */
} bfo_net_options;

typedef struct bfo_net bfo_net;

enum bfo_net_kind { BFO_NET_TCP = 1, BFO_NET_VERBS = 2 };

int bfo_net_init(bfo_net **out, const bfo_config *cfg, const bfo_net_options *opt);
int bfo_net_progress(bfo_net *n, int timeout_ms);
bfo_engine *bfo_net_engine(bfo_net *n);
int bfo_net_rank(const bfo_net *n);
int bfo_net_size(const bfo_net *n);
int bfo_net_nrails(const bfo_net *n);
int bfo_net_rail_kind(const bfo_net *n, int rail); /* BFO_NET_TCP or BFO_NET_VERBS */
const bfo_tcp_stats *bfo_net_get_stats(bfo_net *n);
/* The transport's connections, one line each (bfo_tcp_dump, bfo_verbs_dump), and with mixed
 * rails the engine's rails per peer, for a tool that timed out. */
void bfo_net_dump(bfo_net *n, FILE *f);
/* Test hook: a TCP rail drops every frame silently while on; a verbs rail
 * has its queue pairs moved to the error state (on, once). */
void bfo_net_fault_drop(bfo_net *n, int rail, int on);
void bfo_net_fini(bfo_net *n);
uint64_t bfo_net_now(void);
/* Counts the rails of a list ("verbs:rxe0,tcp:10.0.2.1"), or -1 when an
 * entry is neither a TCP nor a verbs rail. */
int bfo_net_check_rails(const char *list);
/* 1 when built with libibverbs. */
int bfo_net_have_verbs(void);
const char *bfo_net_errname(int rc);

#ifdef __cplusplus
}
#endif
#endif /* BFO_NET_H */
