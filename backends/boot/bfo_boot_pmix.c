// SPDX-License-Identifier: BSD-3-Clause
/* bfo_boot_pmix.c - bfo_boot's wire-up through PMIx (see bfo_boot_pmix.h). */
#define _GNU_SOURCE
#include "bfo_boot_pmix.h"
#include "bfo_boot.h"
#include "bfo_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bfo_bootpmix_env(void)
{
    const char *r = getenv("PMIX_RANK"), *n = getenv("PMIX_NAMESPACE");
    return (r && *r) || (n && *n);
}

#ifndef BFO_HAVE_PMIX

int bfo_bootpmix_init(int *rank, int *size)
{
    (void)rank;
    (void)size;
    fprintf(stderr, "bfo: built without PMIx; set BFO_RANK/BFO_SIZE/BFO_BOOTSTRAP or use bfo run\n");
    return BFO_ERR_INVALID;
}

int bfo_bootpmix_publish(const void *card, size_t len, uint64_t timeout_ns, uint64_t *job)
{
    (void)card, (void)len, (void)timeout_ns, (void)job;
    return BFO_ERR_INVALID;
}

int bfo_bootpmix_lookup(int rank, void *buf, size_t cap, size_t *len)
{
    (void)rank, (void)buf, (void)cap, (void)len;
    return BFO_ERR_INVALID;
}

void bfo_bootpmix_fini(void) {}

#else /* BFO_HAVE_PMIX */

#include <pmix.h>

#define KEY "bfo.card"

static pmix_proc_t me;

static void perr(const char *what, pmix_status_t st)
{
    fprintf(stderr, "bfo: PMIx: %s: %s\n", what, PMIx_Error_string(st));
}

int bfo_bootpmix_init(int *rank, int *size)
{
    pmix_proc_t all;
    pmix_value_t *v = NULL;
    pmix_status_t st = PMIx_Init(&me, NULL, 0);
    if (st != PMIX_SUCCESS) {
        perr("PMIx_Init", st);
        return BFO_BOOT_ERR_EXCHANGE;
    }
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    st = PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &v);
    if (st != PMIX_SUCCESS || !v || v->type != PMIX_UINT32 || v->data.uint32 < 1 ||
        v->data.uint32 > 1000000 || me.rank >= v->data.uint32) {
        perr("PMIX_JOB_SIZE", st != PMIX_SUCCESS ? st : PMIX_ERR_BAD_PARAM);
        if (v)
            PMIX_VALUE_RELEASE(v);
        PMIx_Finalize(NULL, 0);
        return BFO_BOOT_ERR_EXCHANGE;
    }
    *rank = (int)me.rank;
    *size = (int)v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    return BFO_OK;
}

int bfo_bootpmix_publish(const void *card, size_t len, uint64_t timeout_ns, uint64_t *job)
{
    pmix_value_t val;
    pmix_info_t info[2];
    pmix_proc_t all;
    bool collect = true;
    int secs = (int)((timeout_ns ? timeout_ns : 30000000000ull) / 1000000000ull);
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the namespace */
    pmix_status_t st;
    memset(&val, 0, sizeof val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)(uintptr_t)card;
    val.data.bo.size = len;
    if ((st = PMIx_Put(PMIX_GLOBAL, KEY, &val)) != PMIX_SUCCESS) {
        perr("PMIx_Put", st);
        return BFO_BOOT_ERR_EXCHANGE;
    }
    if ((st = PMIx_Commit()) != PMIX_SUCCESS) {
        perr("PMIx_Commit", st);
        return BFO_BOOT_ERR_EXCHANGE;
    }
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    PMIx_Info_load(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIx_Info_load(&info[1], PMIX_TIMEOUT, &secs, PMIX_INT);
    st = PMIx_Fence(&all, 1, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (st != PMIX_SUCCESS) {
        perr("PMIx_Fence", st);
        return BFO_BOOT_ERR_EXCHANGE;
    }
    for (const char *c = me.nspace; *c && c < me.nspace + PMIX_MAX_NSLEN; c++)
        h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
    *job = h;
    return BFO_OK;
}

int bfo_bootpmix_lookup(int rank, void *buf, size_t cap, size_t *len)
{
    pmix_proc_t peer;
    pmix_value_t *v = NULL;
    pmix_status_t st;
    PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t)rank);
    st = PMIx_Get(&peer, KEY, NULL, 0, &v);
    if (st != PMIX_SUCCESS || !v) {
        fprintf(stderr, "bfo: PMIx: PMIx_Get(rank %d, %s): %s\n", rank, KEY, PMIx_Error_string(st));
        return BFO_BOOT_ERR_EXCHANGE;
    }
    if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size > cap) {
        fprintf(stderr, "bfo: PMIx: rank %d published a %s that is not a card\n", rank, KEY);
        PMIX_VALUE_RELEASE(v);
        return BFO_BOOT_ERR_EXCHANGE;
    }
    memcpy(buf, v->data.bo.bytes, v->data.bo.size);
    *len = v->data.bo.size;
    PMIX_VALUE_RELEASE(v);
    return BFO_OK;
}

void bfo_bootpmix_fini(void)
{
    pmix_status_t st = PMIx_Finalize(NULL, 0);
    if (st != PMIX_SUCCESS)
        perr("PMIx_Finalize", st);
}

#endif /* BFO_HAVE_PMIX */
