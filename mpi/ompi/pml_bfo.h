// SPDX-License-Identifier: BSD-3-Clause
/* pml_bfo.h - pml/bfo: Open MPI 4.1's point-to-point layer on bfo, so that
 * unmodified MPI programs keep every message when a rail fails.
 *
 * Part of bfo (see include/fsm/bfo.h).  A component of Open MPI's PML
 * framework, built outside Open MPI's tree against the headers of
 * libopenmpi-dev (`make pml`, mca_pml_bfo.so), selected with
 *     mpirun --mca pml bfo --mca pml_bfo_rails 127.0.0.2,127.0.0.3 ./prog
 * It vendors bfo as any user would: bfo_net (every transport, one engine)
 * and the engine's public API, nothing else of the project.
 *
 * MAPPING (docs/mpi.md has the whole of it)
 *   engine peer      the process's rank in MPI_COMM_WORLD (its vpid)
 *   engine ctx       2 * communicator id, + 1 for the negative tags that
 *                    Open MPI's collectives use, so that MPI_ANY_TAG never
 *                    matches them (the engine's tags are >= 0)
 *   engine tag       the tag, or ~tag for a negative one
 *   envelope src     the sender's rank in the communicator (its local group
 *                    for an intercommunicator)
 *   datatypes        contiguous: the buffer in place; others: the
 *                    convertor behind bfo_data's pack and unpack, called at
 *                    any offset (again after a failover)
 *   completion       bfo_config.done_queue: the progress function pops what
 *                    the engine completed and completes those MPI requests,
 *                    in Open MPI's progress, on the calling thread
 *   no rail left     MPI_ERR_OTHER, with an error code per peer whose
 *                    MPI_Error_string names the peer and its rails
 */
#ifndef PML_BFO_H
#define PML_BFO_H

#include "ompi_config.h"

#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/pml/base/base.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"
#include "opal/class/opal_free_list.h"
#include "opal/datatype/opal_convertor.h"

#include "bfo_net.h"

/* The fragment and RDMA sizes pml_bfo_frag_size, rdma_min and
 * rdma_frag_size leave 0 to are the transports' (their rows' tuning,
 * bfo_net_rail_tuning: 256 KiB fragments when every rail is TCP; RDMA from
 * 8 KiB in 1 MiB reads with shared memory and no verbs), else the engine's. */

BEGIN_C_DECLS

#define PML_BFO_HOLD_USER 1u    /* mca_pml_bfo_request_t.hold: the MPI side's */
#define PML_BFO_HOLD_ENGINE 2u  /* one posting's, from the engine's taking to the end of req_done */

/* One MPI request: Open MPI's, the engine's, and what a persistent request
 * needs to start again. */
typedef struct mca_pml_bfo_request {
    ompi_request_t ompi;        /* first: Open MPI sees only this */
    bfo_request br;             /* the engine's (valid while in_engine) */
    uint8_t kind;               /* BFO_REQ_SEND or BFO_REQ_RECV */
    uint8_t in_engine;          /* the engine holds br: posted, not yet popped from the done
                                 * queue (written and read under bfo_net's lock) */
    /* Who still holds the request (atomic): bit 0, the MPI side (the user's
     * handle, until MPI_Request_free or the free of a completed request);
     * PML_BFO_HOLD_ENGINE per posting, from the engine taking it to the end
     * of its completion in progress.  The last to let go releases it
     * (pml_bfo.c, "requests"). */
    uint32_t hold;
    uint8_t described;          /* conv is prepared (a non-contiguous datatype) */
    uint8_t mode;               /* mca_pml_base_send_mode_t of a send */
    uint8_t negtag;             /* the tag is negative (collectives): ctx + 1 */
    uint8_t probed;             /* an mprobe's request: holds a matched message */
    int conv_err;               /* a pack or unpack that failed: its MPI error, else 0 */
#ifdef PML_BFO_TEST_HOOKS
    uint32_t test_live;         /* PML_BFO_TEST_LIVE from get to release (the test build only) */
#endif
    /* what MPI gave (a persistent request starts again from these) */
    const void *buf;
    size_t count;
    ompi_datatype_t *dt;
    int rank;                   /* destination or source, in comm; MPI_ANY_SOURCE */
    int tag;
    ompi_communicator_t *comm;
    void *bbuf;                 /* a buffered send's copy (mca_pml_base_bsend) */
    void *cbuf;                 /* a small send's copy (copy_limit): freed at completion */
    size_t clen;
    opal_convertor_t conv;      /* a non-contiguous datatype's */
    bfo_data data;
} mca_pml_bfo_request_t;
OBJ_CLASS_DECLARATION(mca_pml_bfo_request_t);

typedef struct mca_pml_bfo_module {
    mca_pml_base_module_t super;
    /* MCA parameters (pml_bfo_component.c registers them) */
    int priority;
    char *rails;                /* NULL: shm and the host's first IPv4 interface */
    char *rails_resolved;       /* what bfo_net got, names and CIDRs made addresses */
    char *rail_nets;            /* the job's rails by network, in order (bfo_railsel) */
    int eager_limit;            /* bytes, 0: bfo_net's default */
    int frag_size;              /* bytes, 0: the transports' (bfo_net_rail_tuning), else the engine's */
    int rdma_min;               /* bytes, 0: the transports' (bfo_net_rail_tuning), else the engine's */
    int rdma;                   /* enum bfo_rdma_mode: 0 auto (GET), 1 GET, 2 PUT, 3 copy only */
    int rdma_frag_size;         /* bytes, 0: the transports' (bfo_net_rail_tuning), else frag_size */
    int heartbeat_ms, probe_timeout_ms, peer_timeout_ms, silence_ms;
    int progress_thread;
    int relay;                  /* 1: relay through a third rank (bfo_config.relay) */
    int verbose;
    size_t unexpected_budget;
    char *standby_rails;        /* rail indices, comma-separated (bfo_config.standby_rails); NULL: none */
    int copy_limit;             /* standard sends up to this many bytes are copied and complete at once */
    size_t copy_cap;            /* bytes of such copies in flight at most (then sends wait as others) */
    /* state */
    size_t copy_bytes;          /* copies in flight (atomic) */
    bfo_net *net;
    bfo_engine *eng;
    int rank, size;
    uint32_t jobid;
    int enabled;                /* add_procs came: progress may dial (the modex is done) */
    int thread_multiple;
    opal_free_list_t reqs;
    int *err_code;              /* per peer: its MPI error code, 0: not made yet */
    int *err_left;              /* per peer: the code of a peer parted (finalized), 0: not made yet */
    int *err_failed;            /* per peer: the code of a peer whose process failed, 0: not made yet */
    int err_pending;            /* the code of an ANY_SOURCE receive while a failure is not
                                 * acknowledged (BFO_ERR_PROC_FAILED_PENDING), 0: not made yet */
} mca_pml_bfo_module_t;

extern mca_pml_bfo_module_t mca_pml_bfo;
OMPI_DECLSPEC extern mca_pml_base_component_2_0_0_t mca_pml_bfo_component;

int mca_pml_bfo_open(void);
int mca_pml_bfo_init(int enable_mpi_threads);
int mca_pml_bfo_finalize(void);
int mca_pml_bfo_source_ok(void *arg, uint32_t ctx, uint32_t src, int peer);
/* Unregisters the memory release hook (pml_bfo_component.c) and waits for
 * a callback still running: before bfo_net_fini. */
void mca_pml_bfo_mem_hooks_stop(void);
void mca_pml_bfo_log(int level, const char *fmt, ...) __opal_attribute_format__(__printf__, 2, 3);

END_C_DECLS
#endif /* PML_BFO_H */
