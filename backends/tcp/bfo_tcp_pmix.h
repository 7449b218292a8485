/* bfo_tcp_pmix.h - the TCP backend's wire-up through PMIx (internal).
 *
 * Part of the TCP backend (see bfo_tcp.h).  Under a PMIx launcher (Open
 * MPI's mpirun, prterun, srun --mpi=pmix) the processes find rank, size
 * and each other's rail listen addresses through PMIx instead of the
 * BFO_BOOTSTRAP exchange:
 *   PMIx_Init; rank from the returned proc, size from PMIX_JOB_SIZE;
 *   PMIx_Put(PMIX_GLOBAL, "bfo.tcp.rails", this rank's rails) ; PMIx_Commit;
 *   PMIx_Fence(all, PMIX_COLLECT_DATA); PMIx_Get each peer's entry.
 * The value is a byte object: u32 version (1), u32 nrails, then per rail
 * u32 ip, u16 port, u16 0 (little-endian, as the TCP bootstrap).  The job
 * id is a hash of the PMIx namespace (the same on every rank).
 *
 * Built with PMIx only when BFO_TCP_HAVE_PMIX is defined (the Makefile
 * probes for <pmix.h>); otherwise bfo_tcp_pmix_init says so and fails.
 */
#ifndef BFO_TCP_PMIX_H
#define BFO_TCP_PMIX_H

#include "bfo_tcp.h"

/* 1 when the environment is a PMIx launch (PMIX_RANK or PMIX_NAMESPACE). */
int bfo_tcp_pmix_env(void);

/* PMIx_Init, then rank and job size.  BFO_OK; BFO_TCP_ERR_BOOTSTRAP (PMIx
 * failed, logged); BFO_ERR_INVALID when built without PMIx (said on
 * stderr).  On failure PMIx is not left initialized. */
int bfo_tcp_pmix_init(int *rank, int *size);

/* The modex: publish mine[0..nrails), fence, fill table[size * nrails]
 * (rank-major) and the job id.  Bounded by timeout_ns (0: 30 s). */
int bfo_tcp_pmix_exchange(int rank, int size, int nrails, const bfo_tcp_addr *mine,
                          bfo_tcp_addr *table, uint64_t *job, uint64_t timeout_ns);

/* PMIx_Finalize (after a successful bfo_tcp_pmix_init). */
void bfo_tcp_pmix_fini(void);

#endif /* BFO_TCP_PMIX_H */
