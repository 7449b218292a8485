// SPDX-License-Identifier: BSD-3-Clause
/* bfo_verbs_map.h - what the verbs backend does with a work completion or an
 * asynchronous event: one pure function each, no libibverbs needed.
 *
 * Part of the verbs backend (bfo_verbs.h).  The status and event numbers are
 * those of libibverbs' enum ibv_wc_status and enum ibv_event_type (part of
 * its ABI; bfo_verbs.c asserts at compile time that they agree), mirrored
 * here so that the mapping builds and is tested everywhere
 * (tests/test_verbs_map.c), with or without libibverbs.
 *
 * WORK COMPLETIONS (bfo_verbs_map_wc)
 *   send, RDMA write, RDMA read (operations the engine posted):
 *     SUCCESS        -> the engine's completion with ok=1 (RC: the peer's
 *                       adapter acknowledged it; the frame is in the peer's
 *                       receive buffer, or the RDMA data in place)
 *     WR_FLUSH_ERR   -> ok=0; the queue pair was already in error (the
 *                       work was flushed: reported, never lost)
 *     any other      -> ok=0, and the queue pair is in error (RC moves it
 *                       there on any error completion): BFO_EV_RAIL_ERROR
 *                       for (peer, rail), then every other operation of the
 *                       queue pair completes with ok=0
 *   receive:
 *     SUCCESS        -> a frame for bfo_engine_frame
 *     WR_FLUSH_ERR   -> the buffer comes back, nothing arrived
 *     LOC_LEN_ERR    -> a frame larger than the receive buffer: malformed
 *                       input, and the queue pair is in error
 *     any other      -> the queue pair is in error
 *   Every error also names a cause, for statistics and logs: the peer or
 *   the path (RETRY_EXC_ERR, RNR_RETRY_EXC_ERR, RESP_TIMEOUT_ERR), a local
 *   fault (LOC_*), the peer refusing the operation (REM_*), a flush.
 *
 * ASYNCHRONOUS EVENTS (bfo_verbs_map_async)
 *   PORT_ERR                         the port is down: RAIL_ERROR for every
 *                                    peer on each rail of that port; no
 *                                    new connection until PORT_ACTIVE
 *   PORT_ACTIVE                      the port is back: connecting allowed
 *   QP_FATAL, QP_REQ_ERR,
 *   QP_ACCESS_ERR, PATH_MIG_ERR      RAIL_ERROR for that queue pair's (peer, rail)
 *   CQ_ERR                           RAIL_ERROR for the (peer, rail) the
 *                                    completion queue belongs to
 *   DEVICE_FATAL                     RAIL_ERROR for every rail of the device,
 *                                    every peer; the rails stay down
 *   anything else (COMM_EST, SQ_DRAINED, LID_CHANGE, GID_CHANGE, ...)
 *                                    nothing
 */
#ifndef BFO_VERBS_MAP_H
#define BFO_VERBS_MAP_H

#ifdef __cplusplus
extern "C" {
#endif

/* enum ibv_wc_status */
enum bfo_vwc {
    BFO_VWC_SUCCESS = 0,
    BFO_VWC_LOC_LEN_ERR = 1,
    BFO_VWC_LOC_QP_OP_ERR = 2,
    BFO_VWC_LOC_EEC_OP_ERR = 3,
    BFO_VWC_LOC_PROT_ERR = 4,
    BFO_VWC_WR_FLUSH_ERR = 5,
    BFO_VWC_MW_BIND_ERR = 6,
    BFO_VWC_BAD_RESP_ERR = 7,
    BFO_VWC_LOC_ACCESS_ERR = 8,
    BFO_VWC_REM_INV_REQ_ERR = 9,
    BFO_VWC_REM_ACCESS_ERR = 10,
    BFO_VWC_REM_OP_ERR = 11,
    BFO_VWC_RETRY_EXC_ERR = 12,
    BFO_VWC_RNR_RETRY_EXC_ERR = 13,
    BFO_VWC_LOC_RDD_VIOL_ERR = 14,
    BFO_VWC_REM_INV_RD_REQ_ERR = 15,
    BFO_VWC_REM_ABORT_ERR = 16,
    BFO_VWC_INV_EECN_ERR = 17,
    BFO_VWC_INV_EEC_STATE_ERR = 18,
    BFO_VWC_FATAL_ERR = 19,
    BFO_VWC_RESP_TIMEOUT_ERR = 20,
    BFO_VWC_GENERAL_ERR = 21
};

/* enum ibv_event_type */
enum bfo_vev {
    BFO_VEV_CQ_ERR = 0,
    BFO_VEV_QP_FATAL = 1,
    BFO_VEV_QP_REQ_ERR = 2,
    BFO_VEV_QP_ACCESS_ERR = 3,
    BFO_VEV_COMM_EST = 4,
    BFO_VEV_SQ_DRAINED = 5,
    BFO_VEV_PATH_MIG = 6,
    BFO_VEV_PATH_MIG_ERR = 7,
    BFO_VEV_DEVICE_FATAL = 8,
    BFO_VEV_PORT_ACTIVE = 9,
    BFO_VEV_PORT_ERR = 10,
    BFO_VEV_LID_CHANGE = 11,
    BFO_VEV_PKEY_CHANGE = 12,
    BFO_VEV_SM_CHANGE = 13,
    BFO_VEV_SRQ_ERR = 14,
    BFO_VEV_SRQ_LIMIT_REACHED = 15,
    BFO_VEV_QP_LAST_WQE_REACHED = 16,
    BFO_VEV_CLIENT_REREGISTER = 17,
    BFO_VEV_GID_CHANGE = 18
};

/* Why an operation failed (statistics, logs). */
enum bfo_vcause {
    BFO_VCAUSE_NONE = 0,   /* success */
    BFO_VCAUSE_FLUSH = 1,  /* flushed: the queue pair was already in error */
    BFO_VCAUSE_PATH = 2,   /* no answer from the peer: retries exhausted, timeout */
    BFO_VCAUSE_LOCAL = 3,  /* this side: local QP, protection, access, length */
    BFO_VCAUSE_REMOTE = 4, /* the peer refused: access, invalid request, operation */
    BFO_VCAUSE_FATAL = 5   /* fatal or unknown */
};

typedef struct bfo_verbs_wc_action {
    int ok;        /* operation: the engine's ok; receive: a frame arrived */
    int qp_failed; /* the queue pair is (now) in error: RAIL_ERROR once, flush the rest */
    int malformed; /* the peer sent something it must not (counted) */
    int cause;     /* enum bfo_vcause */
} bfo_verbs_wc_action;

/* Scope of an asynchronous event. */
enum bfo_vscope {
    BFO_VSCOPE_NONE = 0,   /* nothing to do */
    BFO_VSCOPE_QP = 1,     /* the (peer, rail) of one queue pair */
    BFO_VSCOPE_CQ = 2,     /* the (peer, rail) of one completion queue */
    BFO_VSCOPE_PORT = 3,   /* every peer on every rail of one port */
    BFO_VSCOPE_DEVICE = 4  /* every peer on every rail of one device */
};

typedef struct bfo_verbs_async_action {
    int scope;      /* enum bfo_vscope: whose rails get RAIL_ERROR */
    int port_state; /* +1 the port came up, -1 it went down, 0 unchanged */
    int permanent;  /* the device is gone: its rails never come back */
} bfo_verbs_async_action;

/* The action for one work completion: status is its ibv_wc_status,
 * is_recv whether it completes a receive. */
static inline bfo_verbs_wc_action bfo_verbs_map_wc(int status, int is_recv)
{
    bfo_verbs_wc_action a = { 0, 0, 0, BFO_VCAUSE_NONE };
    switch (status) {
    case BFO_VWC_SUCCESS: a.ok = 1; return a;
    case BFO_VWC_WR_FLUSH_ERR: a.cause = BFO_VCAUSE_FLUSH; return a;
    case BFO_VWC_RETRY_EXC_ERR:
    case BFO_VWC_RNR_RETRY_EXC_ERR:
    case BFO_VWC_RESP_TIMEOUT_ERR: a.cause = BFO_VCAUSE_PATH; break;
    case BFO_VWC_LOC_LEN_ERR:
        a.cause = BFO_VCAUSE_LOCAL;
        a.malformed = is_recv; /* the peer sent a frame larger than any it may send */
        break;
    case BFO_VWC_LOC_QP_OP_ERR:
    case BFO_VWC_LOC_EEC_OP_ERR:
    case BFO_VWC_LOC_PROT_ERR:
    case BFO_VWC_LOC_ACCESS_ERR:
    case BFO_VWC_LOC_RDD_VIOL_ERR:
    case BFO_VWC_MW_BIND_ERR: a.cause = BFO_VCAUSE_LOCAL; break;
    case BFO_VWC_REM_INV_REQ_ERR:
    case BFO_VWC_REM_ACCESS_ERR:
    case BFO_VWC_REM_OP_ERR:
    case BFO_VWC_REM_INV_RD_REQ_ERR:
    case BFO_VWC_REM_ABORT_ERR:
    case BFO_VWC_BAD_RESP_ERR: a.cause = BFO_VCAUSE_REMOTE; break;
    default: a.cause = BFO_VCAUSE_FATAL; break;
    }
    a.qp_failed = 1;
    return a;
}

/* The action for one asynchronous event (its ibv_event_type). */
static inline bfo_verbs_async_action bfo_verbs_map_async(int event)
{
    bfo_verbs_async_action a = { BFO_VSCOPE_NONE, 0, 0 };
    switch (event) {
    case BFO_VEV_PORT_ERR: a.scope = BFO_VSCOPE_PORT; a.port_state = -1; break;
    case BFO_VEV_PORT_ACTIVE: a.port_state = 1; break;
    case BFO_VEV_QP_FATAL:
    case BFO_VEV_QP_REQ_ERR:
    case BFO_VEV_QP_ACCESS_ERR:
    case BFO_VEV_PATH_MIG_ERR: a.scope = BFO_VSCOPE_QP; break;
    case BFO_VEV_CQ_ERR: a.scope = BFO_VSCOPE_CQ; break;
    case BFO_VEV_DEVICE_FATAL:
        a.scope = BFO_VSCOPE_DEVICE;
        a.port_state = -1;
        a.permanent = 1;
        break;
    default: break;
    }
    return a;
}

static inline const char *bfo_verbs_wc_name(int status)
{
    static const char *const n[] = {
        "SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR", "LOC_PROT_ERR",
        "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR",
        "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",
        "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR", "INV_EEC_STATE_ERR", "FATAL_ERR",
        "RESP_TIMEOUT_ERR", "GENERAL_ERR"
    };
    return status >= 0 && status < (int)(sizeof n / sizeof n[0]) ? n[status] : "UNKNOWN_WC_STATUS";
}

static inline const char *bfo_verbs_event_name(int event)
{
    static const char *const n[] = {
        "CQ_ERR", "QP_FATAL", "QP_REQ_ERR", "QP_ACCESS_ERR", "COMM_EST", "SQ_DRAINED",
        "PATH_MIG", "PATH_MIG_ERR", "DEVICE_FATAL", "PORT_ACTIVE", "PORT_ERR", "LID_CHANGE",
        "PKEY_CHANGE", "SM_CHANGE", "SRQ_ERR", "SRQ_LIMIT_REACHED", "QP_LAST_WQE_REACHED",
        "CLIENT_REREGISTER", "GID_CHANGE"
    };
    return event >= 0 && event < (int)(sizeof n / sizeof n[0]) ? n[event] : "UNKNOWN_EVENT";
}

static inline const char *bfo_verbs_cause_name(int cause)
{
    switch (cause) {
    case BFO_VCAUSE_NONE: return "none";
    case BFO_VCAUSE_FLUSH: return "flushed";
    case BFO_VCAUSE_PATH: return "no answer from the peer";
    case BFO_VCAUSE_LOCAL: return "local error";
    case BFO_VCAUSE_REMOTE: return "refused by the peer";
    default: return "fatal";
    }
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_VERBS_MAP_H */
