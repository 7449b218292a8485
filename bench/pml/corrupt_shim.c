// SPDX-License-Identifier: BSD-3-Clause
/* corrupt_shim.c - a broken "PML" for bench/pml/selftest.sh: preloaded into
 * pml_bench (LD_PRELOAD, PMPI), it damages every received MPI_BYTE message
 * of at least 64 bytes after the real receive completed, to show that
 * pml_bench's verification catches what a broken PML would deliver.
 *
 *   PMLB_CORRUPT=mid    flip the middle byte (caught by the full check of
 *                       the first and last iteration)
 *   PMLB_CORRUPT=first  flip the first byte (caught by the stamp of every
 *                       timed iteration as well)
 *   PMLB_CORRUPT_BW=1   damage only the bandwidth phase (MPI_Irecv +
 *                       MPI_Waitall), not MPI_Recv
 */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXREQ 4096
static struct { MPI_Request req; void *buf; int count; } pending[MAXREQ];

static void damage(void *buf, int count, MPI_Datatype type)
{
    const char *mode = getenv("PMLB_CORRUPT");
    if (!mode || type != MPI_BYTE || count < 64) return;
    unsigned char *p = buf;
    if (!strcmp(mode, "first")) p[0] ^= 0x01;
    else p[count / 2] ^= 0x01;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    int rc = PMPI_Recv(buf, count, type, src, tag, comm, st);
    if (rc == MPI_SUCCESS && !getenv("PMLB_CORRUPT_BW")) damage(buf, count, type);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm, MPI_Request *req)
{
    int rc = PMPI_Irecv(buf, count, type, src, tag, comm, req);
    if (rc == MPI_SUCCESS && type == MPI_BYTE)
        for (int i = 0; i < MAXREQ; i++)
            if (!pending[i].buf) {
                pending[i].req = *req; pending[i].buf = buf; pending[i].count = count;
                break;
            }
    return rc;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    MPI_Request copy[MAXREQ];
    int k = n < MAXREQ ? n : MAXREQ;
    memcpy(copy, reqs, sizeof(MPI_Request) * (size_t)k);
    int rc = PMPI_Waitall(n, reqs, sts);
    for (int j = 0; j < k; j++)
        for (int i = 0; i < MAXREQ; i++)
            if (pending[i].buf && pending[i].req == copy[j]) {
                if (rc == MPI_SUCCESS) damage(pending[i].buf, pending[i].count, MPI_BYTE);
                pending[i].buf = NULL;
                break;
            }
    return rc;
}
