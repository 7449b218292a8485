// SPDX-License-Identifier: BSD-3-Clause
/* fuzz_tcp_script.h - the commands of a fuzz_tcp_frames script, shared
 * with gen_corpus.c (which writes seeds).  Each command is its byte
 * (modulo TF_NCMD) and its arguments:
 *   TF_RAW        n-1, then n bytes written as they are
 *   TF_DATA[2]    a, len, then len bytes (none when a & 0x40): a DATA frame;
 *                 a & 0x01 the stalled flag, a & 0x02 an ack one or two
 *                 beyond what the backend sent, a & 0x08 a sequence number
 *                 (a >> 4) % 3 + 1 ahead, a & 0x40 a length of len + 256
 *   TF_ACK        a: an ACK frame acknowledging what the backend sent, one
 *                 more when a & 1; a & 2 the stalled flag, a & 0x10 a
 *                 sequence number (which an ACK must not have)
 *   TF_ANSWER     a: what the engine answers from now on: a % 6 indexes
 *                 OK, AGAIN ((a >> 4) + 1 times, then OK), STALE, PROTOCOL,
 *                 TRUNCATED, PEER_UNREACHABLE
 *   TF_POST       a: the backend sends a frame of 8 + a % (max_frame - 7) bytes
 *   TF_PROGRESS   a: a % 8 + 1 progress calls
 *   TF_DISCONNECT the engine maps the rail out
 *   TF_SHUTDOWN   rank 0 half-closes the connection
 */
#ifndef BFO_FUZZ_TCP_SCRIPT_H
#define BFO_FUZZ_TCP_SCRIPT_H

enum { TF_RAW, TF_DATA, TF_DATA2, TF_ACK, TF_ANSWER, TF_POST, TF_PROGRESS, TF_DISCONNECT, TF_SHUTDOWN,
       TF_NCMD };

#endif /* BFO_FUZZ_TCP_SCRIPT_H */
