// SPDX-License-Identifier: BSD-3-Clause
/* bfo_boot_pmix.h - bfo_boot's PMIx path (internal to backends/boot: its
 * prefix bfo_bootpmix_ is that backend's, not the engine's bfo__). */
#ifndef BFO_BOOT_PMIX_H
#define BFO_BOOT_PMIX_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the environment is a PMIx launch (PMIX_RANK or PMIX_NAMESPACE). */
int bfo_bootpmix_env(void);
/* PMIx_Init, then rank and job size.  BFO_OK; BFO_BOOT_ERR_EXCHANGE (PMIx
 * refused, said on stderr); BFO_ERR_INVALID when built without PMIx. */
int bfo_bootpmix_init(int *rank, int *size);
/* PMIx_Put of the card, PMIx_Commit, a fence bounded by timeout_ns; the
 * job id is a hash of the namespace. */
int bfo_bootpmix_publish(const void *card, size_t len, uint64_t timeout_ns, uint64_t *job);
/* PMIx_Get of a rank's card. */
int bfo_bootpmix_lookup(int rank, void *buf, size_t cap, size_t *len);
/* PMIx_Finalize (after a successful bfo_bootpmix_init). */
void bfo_bootpmix_fini(void);

#endif /* BFO_BOOT_PMIX_H */
