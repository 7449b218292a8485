/* bfo_tcp_pmix.c - the TCP backend's wire-up through PMIx (see bfo_tcp_pmix.h). */
#define _GNU_SOURCE
#include "bfo_tcp_pmix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bfo_tcp_pmix_env(void)
{
    const char *r = getenv("PMIX_RANK"), *n = getenv("PMIX_NAMESPACE");
    return (r && *r) || (n && *n);
}

#ifndef BFO_TCP_HAVE_PMIX

int bfo_tcp_pmix_init(int *rank, int *size)
{
    (void)rank;
    (void)size;
    fprintf(stderr, "bfo: built without PMIx; set BFO_RANK/BFO_SIZE/BFO_BOOTSTRAP or use bfo run\n");
    return BFO_ERR_INVALID;
}

int bfo_tcp_pmix_exchange(int rank, int size, int nrails, const bfo_tcp_addr *mine,
                          bfo_tcp_addr *table, uint64_t *job, uint64_t timeout_ns)
{
    (void)rank, (void)size, (void)nrails, (void)mine, (void)table, (void)job, (void)timeout_ns;
    return BFO_ERR_INVALID;
}

void bfo_tcp_pmix_fini(void) {}

#else /* BFO_TCP_HAVE_PMIX */

#include <pmix.h>

#define KEY "bfo.tcp.rails"
#define VERSION 1u

static pmix_proc_t me;

static void perr(const char *what, pmix_status_t st)
{
    fprintf(stderr, "bfo-tcp: PMIx: %s: %s\n", what, PMIx_Error_string(st));
}

int bfo_tcp_pmix_init(int *rank, int *size)
{
    pmix_proc_t all;
    pmix_value_t *v = NULL;
    pmix_status_t st = PMIx_Init(&me, NULL, 0);
    if (st != PMIX_SUCCESS) {
        perr("PMIx_Init", st);
        return BFO_TCP_ERR_BOOTSTRAP;
    }
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    st = PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &v);
    if (st != PMIX_SUCCESS || !v || v->type != PMIX_UINT32 || v->data.uint32 < 1 ||
        v->data.uint32 > 1000000 || me.rank >= v->data.uint32) {
        perr("PMIX_JOB_SIZE", st != PMIX_SUCCESS ? st : PMIX_ERR_BAD_PARAM);
        if (v)
            PMIX_VALUE_RELEASE(v);
        PMIx_Finalize(NULL, 0);
        return BFO_TCP_ERR_BOOTSTRAP;
    }
    *rank = (int)me.rank;
    *size = (int)v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    return BFO_OK;
}

int bfo_tcp_pmix_exchange(int rank, int size, int nrails, const bfo_tcp_addr *mine,
                          bfo_tcp_addr *table, uint64_t *job, uint64_t timeout_ns)
{
    uint8_t buf[8 + 8 * BFO_MAX_RAILS];
    size_t len = 8 + 8 * (size_t)nrails;
    pmix_value_t val;
    pmix_info_t info[2];
    pmix_proc_t all;
    bool collect = true;
    int secs = (int)((timeout_ns ? timeout_ns : 30000000000ull) / 1000000000ull);
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the namespace */
    pmix_status_t st;
    if (nrails < 1 || nrails > BFO_MAX_RAILS || rank != (int)me.rank)
        return BFO_ERR_INVALID;
    bfo_put32(buf, VERSION);
    bfo_put32(buf + 4, (uint32_t)nrails);
    for (int r = 0; r < nrails; r++) {
        bfo_put32(buf + 8 + 8 * r, mine[r].ip);
        bfo_put16(buf + 12 + 8 * r, mine[r].port);
        bfo_put16(buf + 14 + 8 * r, 0);
        table[rank * nrails + r] = mine[r];
    }
    memset(&val, 0, sizeof val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)buf;
    val.data.bo.size = len;
    if ((st = PMIx_Put(PMIX_GLOBAL, KEY, &val)) != PMIX_SUCCESS) {
        perr("PMIx_Put", st);
        return BFO_TCP_ERR_BOOTSTRAP;
    }
    if ((st = PMIx_Commit()) != PMIX_SUCCESS) {
        perr("PMIx_Commit", st);
        return BFO_TCP_ERR_BOOTSTRAP;
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
        return BFO_TCP_ERR_BOOTSTRAP;
    }
    for (int p = 0; p < size; p++) {
        pmix_proc_t peer;
        pmix_value_t *v = NULL;
        const uint8_t *b;
        if (p == rank)
            continue;
        PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t)p);
        st = PMIx_Get(&peer, KEY, NULL, 0, &v);
        if (st != PMIX_SUCCESS || !v) {
            fprintf(stderr, "bfo-tcp: PMIx: PMIx_Get(rank %d, %s): %s\n", p, KEY,
                    PMIx_Error_string(st));
            return BFO_TCP_ERR_BOOTSTRAP;
        }
        b = (const uint8_t *)v->data.bo.bytes;
        if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != len || bfo_get32(b) != VERSION ||
            bfo_get32(b + 4) != (uint32_t)nrails) {
            fprintf(stderr, "bfo-tcp: PMIx: rank %d published %s for another rail count "
                    "(BFO_RAILS must have %d rail(s) on every rank)\n", p, KEY, nrails);
            PMIX_VALUE_RELEASE(v);
            return BFO_TCP_ERR_BOOTSTRAP;
        }
        for (int r = 0; r < nrails; r++) {
            table[p * nrails + r].ip = bfo_get32(b + 8 + 8 * r);
            table[p * nrails + r].port = bfo_get16(b + 12 + 8 * r);
        }
        PMIX_VALUE_RELEASE(v);
    }
    for (const char *c = me.nspace; *c && c < me.nspace + PMIX_MAX_NSLEN; c++)
        h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
    *job = h;
    return BFO_OK;
}

void bfo_tcp_pmix_fini(void)
{
    pmix_status_t st = PMIx_Finalize(NULL, 0);
    if (st != PMIX_SUCCESS)
        perr("PMIx_Finalize", st);
}

#endif /* BFO_TCP_HAVE_PMIX */
