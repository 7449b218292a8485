/* bfo_tcpsub.h - the TCP backend as one rail group under the multiplexer.
 *
 * Part of bfo_net (bfo_net.h).  bfo_tcp owns its engine; under bfo_net the
 * engine belongs to the multiplexer.  Until bfo_tcp has a hook for that
 * (see docs/verbs.md, "the hook bfo_tcp needs"), bfo_tcpsub.c compiles
 * backends/tcp/bfo_tcp.c unchanged a second time, with its calls into the
 * engine, its PMIx wire-up and its bootstrap exchange redirected:
 *   - completions, frames and rail events go to a bfo_sink (TCP rail
 *     numbers; the multiplexer renumbers them), the engine's own timers
 *     are the multiplexer's (its progress is not run), and the rail-state
 *     filter is left to the real engine (which ignores an event a rail
 *     does not wait for);
 *   - rank, size and the address exchange come from the multiplexer, which
 *     exchanges every rail's address, TCP and verbs, in one round
 *     (BFO_BOOTSTRAP or PMIx), so both transports share one job id.
 * Every public name of that copy is renamed bfo_tcpsub_*, so both copies
 * link into one program.
 */
#ifndef BFO_TCPSUB_H
#define BFO_TCPSUB_H

#include "bfo_sink.h"
#include "bfo_tcp.h"

/* The address exchange: the TCP rails' own addresses in, every rank's out
 * (size * nrails, rank-major), and the job id. */
typedef int (*bfo_tcpsub_exchange_fn)(void *ctx, int nrails, const bfo_tcp_addr *mine,
                                      bfo_tcp_addr *table, uint64_t *job);

int bfo_tcpsub_open(bfo_tcp **out, int rank, int size, const bfo_config *cfg,
                    const bfo_tcp_options *opt, const bfo_sink *sink,
                    bfo_tcpsub_exchange_fn exchange, void *exchange_ctx);
/* Its transport functions (post_send, connect, caps, bandwidth; ctx = t). */
void bfo_tcpsub_backend(bfo_tcp *t, bfo_backend *be);
/* I/O without waiting; then the acks owed when the caller is about to sleep. */
int bfo_tcpsub_progress(bfo_tcp *t);
void bfo_tcpsub_before_sleep(bfo_tcp *t);
int bfo_tcpsub_epoll_fd(const bfo_tcp *t);
const bfo_tcp_stats *bfo_tcpsub_stats(const bfo_tcp *t);
void bfo_tcpsub_fault_drop(bfo_tcp *t, int rail, int on);
void bfo_tcpsub_fini(bfo_tcp *t);

#endif /* BFO_TCPSUB_H */
