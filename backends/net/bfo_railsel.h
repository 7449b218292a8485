// SPDX-License-Identifier: BSD-3-Clause
/* bfo_railsel.h - which rails a rank uses, from one value for the whole job.
 *
 * A rail is a network, not a position.  The value every rank is given (an
 * MPI job's pml_bfo_rails, the same string on every host) names networks;
 * each host finds its own address on each of them, and rail i of the job
 * is the same network on every rank.  A host that has no address on a
 * network holds that rail's place with "-" (BFO_NET_RAIL_ABSENT): its
 * ranks and the others have no rail there between them, and use the rest.
 *
 * THE VALUE.  Entries, comma-separated, each one rail (or, for auto, as
 * many as the host has networks):
 *   10.1.0.0/16, fd00:1::/64   a network by CIDR (IPv4 or IPv6): this host's
 *                              address in it (never loopback or IPv6
 *                              link-local); none here: "-"
 *   NAME=CIDR+CIDR...          a network group the admin names (a routed
 *                              fabric, one subnet per rack): this host's
 *                              address in any of them; the rail is NAME
 *   eth1                       an interface: the network it is on here (its
 *                              IPv4 subnet, else its global IPv6 one); a host
 *                              without it fails (a typo must not pass); lo,
 *                              named so, is a network of its host alone
 *   ?eth2                      the same where the host has it, nothing where
 *                              it has not
 *   auto                       every interface the default takes (below)
 *   shm, verbs:DEV[:PORT],     as the transports take them (bfo_net.h);
 *   tcp:ADDR, ADDR             a literal address is the same on every
 *                              host: for one host only
 *   ^NAME,NAME...              (the whole value) the default without these
 *                              interfaces, CIDRs or shm, as Open MPI's
 *                              btl_tcp_if_exclude takes them
 * Unset (NULL or ""): "shm,auto".
 *
 * THE DEFAULT (auto) takes every interface that is up, has its carrier,
 * and has an IPv4 address or a global IPv6 one, except loopback, bridges
 * and tunnels (by driver: bridge, tun, openvswitch, dummy), and the
 * virtual ones by name (docker, virbr, br-, veth, vnet, tap, tun, lxc,
 * cni, flannel, cali, kube, weave, vxlan, podman, zt): each is said with
 * why in bfo_railsel.skipped.  Two interfaces of one host on one network
 * are one rail (the first).
 *
 * THE JOB'S RAILS.  CIDRs, groups, literals, shm and verbs name the same
 * rails on every host: the list is this rank's alone, in the value's order
 * (bfo_railsel_local).  Interfaces and auto find networks per host: every
 * rank publishes the networks it found (bfo_railsel_nets) and the job's
 * rails are every network any rank has, ordered by the first entry that
 * found it, then by name (bfo_railsel_merge over every rank's networks):
 * the same list on every rank, whatever each host's interface order.
 * More networks than BFO_MAX_RAILS: an error naming them.
 *
 * Nothing here allocates; bfo_railsel_host reads getifaddrs and asks each
 * interface's driver (SIOCETHTOOL, which answers in the caller's network
 * namespace, unlike /sys). */
#ifndef BFO_RAILSEL_H
#define BFO_RAILSEL_H

#include <stddef.h>
#include <stdint.h>

#include "bfo_engine.h" /* BFO_MAX_RAILS, BFO_OK */

#ifdef __cplusplus
extern "C" {
#endif

#define BFO_RAILSEL_IF_MAX 64   /* addresses of a host looked at */
#define BFO_RAILSEL_NAME_MAX 64 /* a network's name, an interface's */
#define BFO_RAILSEL_RAIL_MAX 80 /* what bfo_net takes for one rail */
#define BFO_RAILSEL_CAND_MAX 32 /* networks one rank may find */

/* One address of one interface of this host. */
enum {
    BFO_RAILSEL_UP = 1,        /* IFF_UP */
    BFO_RAILSEL_RUNNING = 2,   /* IFF_RUNNING: the carrier is there */
    BFO_RAILSEL_LOOPBACK = 4,  /* IFF_LOOPBACK */
    BFO_RAILSEL_BRIDGE = 8,    /* its driver is a bridge, tun, ovs, dummy */
};
typedef struct bfo_railsel_if {
    char name[BFO_RAILSEL_NAME_MAX];
    char driver[32];   /* what SIOCETHTOOL says ("" when it says nothing) */
    int family;        /* 4 or 6 */
    uint8_t addr[16];  /* 4 or 16 bytes, network order */
    int prefix;        /* the netmask's bits */
    unsigned flags;    /* BFO_RAILSEL_* */
} bfo_railsel_if;

/* One rail this rank found, and why. */
typedef struct bfo_railsel_rail {
    char net[BFO_RAILSEL_NAME_MAX];   /* the network: the job-wide name of the rail */
    char rail[BFO_RAILSEL_RAIL_MAX];  /* what bfo_net takes; "-" when this host has none */
    char ifname[BFO_RAILSEL_NAME_MAX]; /* the interface ("" for shm, verbs, a literal, none) */
    char why[128];                    /* "10.36.1.11", "no address in it here" */
    int entry;                        /* the value's entry that named it */
    int found;                        /* 1: by an interface (the job's order needs every rank's) */
    int host_only;                    /* 1: a literal loopback address: it names every host's own */
} bfo_railsel_rail;

typedef struct bfo_railsel {
    int n;
    bfo_railsel_rail r[BFO_RAILSEL_CAND_MAX];
    int exchange;          /* 1: bfo_railsel_merge over every rank's networks */
    char skipped[512];     /* interfaces auto left out, and why */
    char err[256];         /* why bfo_railsel_pick or _merge failed */
    /* the job's rails (after _local or _merge) */
    int nslots;
    char slot[BFO_MAX_RAILS][BFO_RAILSEL_NAME_MAX];
    int mine[BFO_MAX_RAILS]; /* index into r[], or -1: "-" */
} bfo_railsel;

/* This host's interfaces' addresses into out (at most cap): how many, or
 * -1 when getifaddrs fails. */
int bfo_railsel_host(bfo_railsel_if *out, int cap);

/* The rails this rank finds for value (NULL or "": the default) on a host
 * with these interfaces.  BFO_OK, or BFO_ERR_INVALID with s->err said
 * (a bad entry, a named interface this host lacks, nothing found). */
int bfo_railsel_pick(bfo_railsel *s, const char *value, const bfo_railsel_if *ifs, int nifs);

/* The networks this rank found, for the others' bfo_railsel_merge: text,
 * "ENTRY NET;..." (a failed pick: "!" and its error).  The length written,
 * or 0 when it does not fit. */
size_t bfo_railsel_nets(const bfo_railsel *s, char *out, size_t cap);

/* The job's rails from this rank's alone (bfo_railsel_merge over its own
 * networks): where no exchange is needed (s->exchange 0: every rank has
 * the same list) or every rank is on this host.  BFO_OK, or
 * BFO_ERR_INVALID with s->err said. */
int bfo_railsel_local(bfo_railsel *s);

/* The job's rails from every rank's bfo_railsel_nets text (this rank's
 * among them; NULL for a rank whose text could not be read: an error).
 * BFO_OK, or BFO_ERR_INVALID with s->err said (a rank's pick failed, more
 * networks than BFO_MAX_RAILS, none of them this rank's). */
int bfo_railsel_merge(bfo_railsel *s, const char *const *nets, int nranks);

/* The rail list bfo_net takes (bfo_net_options.rails), one per slot: the
 * length written, or 0 when it does not fit. */
size_t bfo_railsel_list(const bfo_railsel *s, char *out, size_t cap);

/* What was picked, for a log line: "10.36.1.0/24 eth1 10.36.1.11; 10.36.2.0/24
 * - (no address in it here); ...; skipped: docker0 (virtual), ...". */
size_t bfo_railsel_describe(const bfo_railsel *s, char *out, size_t cap);

/* The slot of a network's name (or of an interface's on this host), or -1. */
int bfo_railsel_slot(const bfo_railsel *s, const char *net);

#ifdef __cplusplus
}
#endif
#endif
