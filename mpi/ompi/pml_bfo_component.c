// SPDX-License-Identifier: BSD-3-Clause
/* pml_bfo_component.c - the component: its MCA parameters, and setting up
 * bfo_net at selection (its card goes through Open MPI's modex).
 *
 * Part of bfo (see pml_bfo.h).  Installed, the component is opened by every
 * job: it competes only when asked for by name (`--mca pml bfo`), and
 * otherwise returns from init having done nothing (no socket, no memory).
 */
#include "pml_bfo.h"
#include "bfo_railsel.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/memory/base/base.h"
#include "opal/memoryhooks/memory.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/error.h"
#include "opal/util/output.h"
#include "ompi/mca/rte/rte.h"

static int component_register(void);
static int component_open(void);
static int component_close(void);
static mca_pml_base_module_t *component_init(int *priority, bool enable_progress_threads,
                                             bool enable_mpi_threads);
static int component_fini(void);

mca_pml_base_component_2_0_0_t mca_pml_bfo_component = {
    .pmlm_version = {
        MCA_PML_BASE_VERSION_2_0_0,
        .mca_component_name = "bfo",
        .mca_component_major_version = OMPI_MAJOR_VERSION,
        .mca_component_minor_version = OMPI_MINOR_VERSION,
        .mca_component_release_version = OMPI_RELEASE_VERSION,
        .mca_open_component = component_open,
        .mca_close_component = component_close,
        .mca_query_component = NULL,
        .mca_register_component_params = component_register,
    },
    .pmlm_data = {
        .param_field = MCA_BASE_METADATA_PARAM_NONE
    },
    .pmlm_init = component_init,
    .pmlm_finalize = component_fini,
};

void mca_pml_bfo_log(int level, const char *fmt, ...)
{
    char line[1024];
    int n;
    va_list ap;
    if (level > mca_pml_bfo.verbose)
        return;
    /* one write per line: stderr is unbuffered, and the transports' threads
     * and the other ranks (through orted) interleave writes, not lines */
    n = snprintf(line, sizeof line, "pml bfo[%d]: ", mca_pml_bfo.rank);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = (int)strlen(line);
    line[n++] = '\n';
    (void)fwrite(line, 1, (size_t)n, stderr);
}

static char *limits_param = "fail"; /* pml_bfo_limits (bfo_net.h, LIMITS) */

static void reg_int(const char *name, const char *help, int level, int *var)
{
    (void)mca_base_component_var_register(&mca_pml_bfo_component.pmlm_version, name, help,
                                          MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, level,
                                          MCA_BASE_VAR_SCOPE_READONLY, var);
}

/* ------------------------------------------ the transports' settings
 *
 * Every setting in the transports' tables (bfo_net_settings, bfo_setting.h)
 * is the MCA parameter pml_bfo_<transport>_<name>, an int: 0 leaves the
 * transport's default, -1 says "off" where the setting has one, any other
 * value is the setting's own (milliseconds, bytes, a count: its row's
 * unit and range, checked at MPI_Init).  pml_bfo_tcp_beacon_ms is one of
 * them.  Adding a row to a transport's table adds its parameter here. */

#define MAX_SETTINGS 64
typedef struct pml_setting {
    const char *transport;
    const bfo_setting *row;
    char name[64];   /* <transport>_<name>, for MCA (which keeps a pointer) */
    char help[512];
    int value;       /* the parameter's storage */
} pml_setting;
static pml_setting settings[MAX_SETTINGS];
static int nsettings;

static void register_settings(void)
{
    const char *tp;
    int n;
    nsettings = 0;
    for (int i = 0; bfo_net_settings(i, &tp, &n); i++)
        for (int k = 0; k < n && nsettings < MAX_SETTINGS; k++) {
            const bfo_setting *row = &bfo_net_settings(i, &tp, &n)[k];
            pml_setting *m = &settings[nsettings++];
            m->transport = tp;
            m->row = row;
            m->value = 0;
            snprintf(m->name, sizeof m->name, "%s_%s", tp, row->name);
            snprintf(m->help, sizeof m->help, "The %s rails: %s (%s, %g to %g; 0: the default, %g%s)", tp, row->help,
                     bfo_setting_type_name(row->type), row->min, row->max, row->def,
                     row->flags & BFO_SETTING_OFF ? "; -1: off" : "");
            reg_int(m->name, m->help, OPAL_INFO_LVL_5, &m->value);
        }
}

/* The parameters set (non-zero) into opt, through the transports' tables.
 * OMPI_SUCCESS, or OMPI_ERR_BAD_PARAM said on stderr. */
static int settings_apply(bfo_net_options *opt)
{
    for (int i = 0; i < nsettings; i++) {
        char text[32], why[200];
        if (!settings[i].value)
            continue;
        if (settings[i].value == -1 && (settings[i].row->flags & BFO_SETTING_OFF))
            snprintf(text, sizeof text, "off");
        else
            snprintf(text, sizeof text, "%d", settings[i].value);
        if (bfo_net_options_set(opt, settings[i].transport, settings[i].row->name, text, why, sizeof why) !=
            BFO_OK) {
            fprintf(stderr, "pml bfo: pml_bfo_%s %d: %s%s\n", settings[i].name, settings[i].value, why,
                    settings[i].row->flags & BFO_SETTING_OFF ? " (-1: off; 0: the default)" : " (0: the default)");
            return OMPI_ERR_BAD_PARAM;
        }
    }
    return OMPI_SUCCESS;
}

static int component_register(void)
{
    mca_pml_bfo.priority = 5;
    reg_int("priority",
            "Priority of pml bfo when it is asked for by name (--mca pml bfo); it never "
            "competes otherwise (below ob1's 20 either way)",
            OPAL_INFO_LVL_9, &mca_pml_bfo.priority);
    mca_pml_bfo.rails = NULL;
    (void)mca_base_component_var_register(
        &mca_pml_bfo_component.pmlm_version, "rails",
        "The rails, one value for the whole job, comma-separated; each entry names a network and "
        "each host finds its own address on it (rail i is the same network on every rank; a host "
        "without it has no rail there): a CIDR (10.1.0.0/16, fd00:1::/64), a network group "
        "NAME=CIDR+CIDR, an interface (eth1: the network it is on; ?eth2: where present), auto "
        "(every interface up, not loopback, bridge or virtual), shm, verbs:DEVICE[:PORT] (no IP needed), "
        "or a literal address (one host only). ^LIST: the default without these interfaces or "
        "CIDRs. Unset: shm,auto. pml_bfo_verbose 1 says what each rank picked; BFO_RAILS is not read",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_1, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_pml_bfo.rails);
    mca_pml_bfo.eager_limit = 0;
    reg_int("eager_limit",
            "Largest message sent eagerly, in one frame, in bytes; larger ones go by rendezvous "
            "(0: 64 KiB when every rail is TCP, 4 KiB otherwise)",
            OPAL_INFO_LVL_4, &mca_pml_bfo.eager_limit);
    mca_pml_bfo.frag_size = 0;
    reg_int("frag_size",
            "Bytes per fragment of a message sent by rendezvous and copy (0: 256 KiB when every rail "
            "is TCP, else the engine's 64 KiB); each TCP connection keeps a receive buffer of twice "
            "the larger of this and the eager limit. The same on every rank",
            OPAL_INFO_LVL_5, &mca_pml_bfo.frag_size);
    mca_pml_bfo.rdma_min = 0;
    reg_int("rdma_min",
            "Messages from this many bytes go by RDMA (a single copy by the receiver, over shared "
            "memory or verbs rails that can) rather than by copy through the rails "
            "(0: 8 KiB when a shared-memory rail is listed and no verbs rail, else the engine's 64 KiB)",
            OPAL_INFO_LVL_5, &mca_pml_bfo.rdma_min);
    mca_pml_bfo.rdma = 0;
    reg_int("rdma",
            "Which RDMA protocol a message from rdma_min bytes may use: 0 GET when it can (the "
            "receiver reads the sender's buffer), else copy; 1 GET or copy; 2 PUT or copy (the "
            "sender writes into the receiver's buffer); 3 copy only. The same on every rank",
            OPAL_INFO_LVL_5, &mca_pml_bfo.rdma);
    mca_pml_bfo.rdma_frag_size = 0;
    reg_int("rdma_frag_size",
            "Bytes per RDMA read or write of a message sent by RDMA (0: 1 MiB when a shared-memory "
            "rail is listed and no verbs rail, else the fragment size)",
            OPAL_INFO_LVL_5, &mca_pml_bfo.rdma_frag_size);
    mca_pml_bfo.heartbeat_ms = 100;
    reg_int("heartbeat_ms",
            "A rail that heard or sent nothing for this long is probed (milliseconds)",
            OPAL_INFO_LVL_4, &mca_pml_bfo.heartbeat_ms);
    mca_pml_bfo.probe_timeout_ms = 40;
    reg_int("probe_timeout_ms",
            "A probe unanswered for this long (and nothing else heard) fails the rail; its traffic "
            "moves to the other rails (milliseconds; adapted upward to measured round trips)",
            OPAL_INFO_LVL_4, &mca_pml_bfo.probe_timeout_ms);
    mca_pml_bfo.silence_ms = 1000;
    reg_int("silence_ms", "Backstop: a rail that heard nothing at all for this long fails (milliseconds)",
            OPAL_INFO_LVL_5, &mca_pml_bfo.silence_ms);
    mca_pml_bfo.peer_timeout_ms = 10000;
    reg_int("peer_timeout_ms",
            "A peer with no rail up for this long is given up, for good: its pending and later "
            "point-to-point operations complete with MPI_ERR_OTHER (milliseconds; rails that fail "
            "fail over at once, whatever this is: it bounds how long a peer may have none; longer "
            "than bfo's own 2 s, so that ranks starved of CPU on an oversubscribed node are not "
            "given up)",
            OPAL_INFO_LVL_4, &mca_pml_bfo.peer_timeout_ms);
    mca_pml_bfo.relay = 0;
    reg_int("relay",
            "1: a peer that no rail reaches, while a third rank reaches both, is sent to through "
            "that rank (one hop; no RDMA through it) until a rail to it comes back; the same on "
            "every rank (0: off)",
            OPAL_INFO_LVL_4, &mca_pml_bfo.relay);
    mca_pml_bfo.progress_thread = 0;
    reg_int("progress_thread",
            "1: a thread answers rail probes while the program computes without calling MPI "
            "(it completes no request); 0: off (a busy peer is kept alive by its host's answers)",
            OPAL_INFO_LVL_5, &mca_pml_bfo.progress_thread);
    mca_pml_bfo.verbose = 0;
    reg_int("verbose",
            "0: nothing on stderr for what bfo handles itself (rails failing over, reconnecting; a "
            "lost peer reaches the program as an MPI error); 1: the rails chosen, every rail failure "
            "and re-admission; 2 and up: more of bfo's transports, and at MPI_Finalize how many "
            "messages were received eagerly, by copy, by RDMA GET and by RDMA PUT",
            OPAL_INFO_LVL_5, &mca_pml_bfo.verbose);
    mca_pml_bfo.copy_limit = 4096;
    reg_int("copy_limit",
            "Standard and ready sends of up to this many bytes (contiguous) are copied and complete at "
            "once, as a send into a socket buffer does; the copy is kept until the peer has it (0: never)",
            OPAL_INFO_LVL_5, &mca_pml_bfo.copy_limit);
    mca_pml_bfo.copy_cap = 16u << 20;
    (void)mca_base_component_var_register(
        &mca_pml_bfo_component.pmlm_version, "copy_cap",
        "Bytes of such copies in flight at most; past it, sends wait for the peer as larger ones do",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_pml_bfo.copy_cap);
    mca_pml_bfo.unexpected_budget = 0;
    (void)mca_base_component_var_register(
        &mca_pml_bfo_component.pmlm_version, "unexpected_budget",
        "Bytes of messages that arrived before their receive a rank holds at once (0: 64 MiB), "
        "shared between the peers as credit windows",
        MCA_BASE_VAR_TYPE_SIZE_T, NULL, 0, 0, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_pml_bfo.unexpected_budget);
    mca_pml_bfo.standby_rails = NULL;
    (void)mca_base_component_var_register(
        &mca_pml_bfo_component.pmlm_version, "standby_rails",
        "Rails that carry probes only while a rail not among them is up, and data when none is "
        "(active-standby), comma-separated: rail indices (1), networks (10.36.2.0/24, a group's "
        "name) or interfaces of the host (eth2: the rail on its network); unset: none",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_pml_bfo.standby_rails);
    (void)mca_base_component_var_register(
        &mca_pml_bfo_component.pmlm_version, "limits",
        "The open-files and locked-memory limits against what the job may hold, checked at init (a soft "
        "limit is raised where the hard one allows): fail (MPI_Init fails, saying what to set), warn, or off",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_4, MCA_BASE_VAR_SCOPE_READONLY, &limits_param);
    register_settings();
    return OMPI_SUCCESS;
}

static int component_open(void) { return OMPI_SUCCESS; }

static int component_close(void) { return OMPI_SUCCESS; }

/* 1 when the pml selection asks for bfo by name: "bfo", or a list that has
 * it and is not an exclusion ("^..."). */
static int asked_for(void)
{
    const char **value = NULL;
    int idx = mca_base_var_find("ompi", "pml", NULL, NULL);
    if (idx < 0 || mca_base_var_get_value(idx, &value, NULL, NULL) != OPAL_SUCCESS || !value || !*value)
        return 0;
    if ((*value)[0] == '^')
        return 0;
    {
        char *list = strdup(*value), *save = NULL;
        int found = 0;
        for (char *t = list ? strtok_r(list, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
            found |= strcmp(t, "bfo") == 0;
        free(list);
        return found;
    }
}

/* ------------------------------------------------------------ the rails */

/* The rails of this rank, from the one value every rank is given
 * (pml_bfo_rails; bfo_railsel.h says what it takes): each host finds its
 * address on each network the value names, and rail i is the same network
 * on every rank.  When the value names interfaces (or is the default),
 * which networks exist is known only from every host's answer: each rank
 * publishes what it found, one fence (every rank of the job selects bfo
 * alike, so every rank takes part; a rank whose pick failed still does,
 * and publishes why), and each reads every rank's networks.  A value of
 * CIDRs, groups, shm and verbs needs none of that, nor does a job whose
 * ranks are all on one node (each finds the same interfaces). */
#define NETS_KEY "pml.bfo.nets"

static int rails_exchange(bfo_railsel *s)
{
    char mine[1024];
    const char **nets;
    int rc, size = mca_pml_bfo.size;
    if (!bfo_railsel_nets(s, mine, sizeof mine))
        snprintf(mine, sizeof mine, "!its networks do not fit in %zu bytes", sizeof mine);
    OPAL_MODEX_SEND_STRING(rc, OPAL_PMIX_GLOBAL, NETS_KEY, mine, strlen(mine) + 1);
    if (rc == OPAL_SUCCESS && (rc = opal_pmix.commit()) == OPAL_SUCCESS)
        rc = opal_pmix.fence(NULL, 1);
    if (rc != OPAL_SUCCESS) {
        fprintf(stderr, "pml bfo: rank %d: the exchange of the ranks' networks failed: %s\n", mca_pml_bfo.rank,
                opal_strerror(rc));
        return OMPI_ERROR;
    }
    if (s->err[0])
        return OMPI_ERR_BAD_PARAM; /* published for the others to say; this rank says it itself */
    nets = (const char **)calloc((size_t)size, sizeof *nets);
    if (!nets)
        return OMPI_ERR_OUT_OF_RESOURCE;
    for (int r = 0; r < size; r++) {
        opal_process_name_t name;
        uint8_t *data = NULL;
        size_t sz = 0;
        name.jobid = mca_pml_bfo.jobid;
        name.vpid = (opal_vpid_t)r;
        OPAL_MODEX_RECV_STRING(rc, NETS_KEY, &name, &data, &sz);
        if (rc == OPAL_SUCCESS && data && sz > 0 && data[sz - 1] == 0)
            nets[r] = (const char *)data;
        else
            free(data);
    }
    rc = bfo_railsel_merge(s, nets, size) == BFO_OK ? OMPI_SUCCESS : OMPI_ERR_BAD_PARAM;
    for (int r = 0; r < size; r++)
        free((void *)nets[r]);
    free(nets);
    return rc;
}

/* The rail list bfo_net takes, into out; what was picked and why at
 * verbose 1.  OMPI_SUCCESS, or an error said on stderr. */
static int rails_pick(bfo_railsel *s, char *out, size_t cap)
{
    static bfo_railsel_if ifs[BFO_RAILSEL_IF_MAX];
    const char *value = mca_pml_bfo.rails;
    char said[1024];
    const char *shown = value && *value ? value : "(the default: shm,auto)";
    int nifs = bfo_railsel_host(ifs, BFO_RAILSEL_IF_MAX), rc, picked;
    picked = bfo_railsel_pick(s, value, ifs, nifs > 0 ? nifs : 0) == BFO_OK;
    if (!picked)
        fprintf(stderr, "pml bfo: rank %d: pml_bfo_rails \"%s\": %s\n", mca_pml_bfo.rank, shown, s->err);
    /* every rank on this node: every rank finds the interfaces this one
     * finds, so this rank's merge is the job's, and MPI_Init has no fence
     * of bfo's own */
    int one_node = (int)ompi_process_info.num_local_peers + 1 >= mca_pml_bfo.size;
    if (s->exchange && mca_pml_bfo.size > 1 && !one_node)
        rc = rails_exchange(s); /* a failed pick too: the others wait for its word */
    else if (!picked)
        rc = OMPI_ERR_BAD_PARAM;
    else /* the same list everywhere, or one rank: its own networks are the job's */
        rc = bfo_railsel_local(s) == BFO_OK ? OMPI_SUCCESS : OMPI_ERR_BAD_PARAM;
    if (rc != OMPI_SUCCESS && picked && s->err[0]) /* the job's rails, not this rank's pick */
        fprintf(stderr, "pml bfo: rank %d: pml_bfo_rails \"%s\": %s\n", mca_pml_bfo.rank, shown, s->err);
    if (rc != OMPI_SUCCESS)
        return rc;
    for (int k = 0; k < s->n; k++)
        if (s->r[k].host_only && (int)ompi_process_info.num_local_peers + 1 < mca_pml_bfo.size) {
            /* a dial to it from another host reaches a process of that host,
             * which refuses it: peers given up after pml_bfo_peer_timeout_ms */
            fprintf(stderr, "pml bfo: rank %d: pml_bfo_rails \"%s\": %s is a loopback address: it names this "
                            "host on every host, and this job has ranks on other hosts; name networks instead "
                            "(a CIDR such as 10.1.0.0/16, an interface, auto)\n",
                    mca_pml_bfo.rank, shown, s->r[k].rail);
            return OMPI_ERR_BAD_PARAM;
        }
    if (!bfo_railsel_list(s, out, cap)) {
        fprintf(stderr, "pml bfo: rank %d: the rail list is over %zu bytes\n", mca_pml_bfo.rank, cap);
        return OMPI_ERR_BAD_PARAM;
    }
    bfo_railsel_describe(s, said, sizeof said);
    mca_pml_bfo_log(1, "rank %d picked (pml_bfo_rails \"%s\"): %s", mca_pml_bfo.rank, shown, said);
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------ the modex */

static int modex_publish(void *ctx, const void *card, size_t len)
{
    int rc;
    (void)ctx;
    OPAL_MODEX_SEND(rc, OPAL_PMIX_GLOBAL, &mca_pml_bfo_component.pmlm_version, (void *)card, len);
    return rc == OPAL_SUCCESS ? BFO_OK : BFO_BOOT_ERR_EXCHANGE;
}

static int modex_lookup(void *ctx, int rank, void *buf, size_t cap, size_t *len)
{
    opal_process_name_t name;
    void *data = NULL;
    size_t sz = 0;
    int rc;
    (void)ctx;
    name.jobid = mca_pml_bfo.jobid;
    name.vpid = (opal_vpid_t)rank;
    OPAL_MODEX_RECV(rc, &mca_pml_bfo_component.pmlm_version, &name, &data, &sz);
    if (rc != OPAL_SUCCESS || !data || sz > cap) {
        fprintf(stderr, "pml bfo: rank %d: the modex has no card of rank %d (%s, %zu bytes) enabled=%d\n", mca_pml_bfo.rank,
                rank, rc != OPAL_SUCCESS ? opal_strerror(rc) : data ? "too long" : "none", sz, mca_pml_bfo.enabled);
        free(data);
        return BFO_BOOT_ERR_EXCHANGE;
    }
    memcpy(buf, data, sz);
    *len = sz;
    free(data);
    return BFO_OK;
}

/* pml_bfo_standby_rails ("1", "1,2", "10.36.2.0/24", "eth2") as
 * bfo_config.standby_rails: rail indices, or networks (a rail's name, or
 * an interface of this host: the network it is on); -1 when an entry is
 * neither (said).  A network no host has, or an interface this host
 * lacks, names nothing here: it is not an error where a network is
 * optional. */
static long standby_mask(const char *list, const bfo_railsel *s)
{
    unsigned m = 0;
    char copy[512], *save = NULL;
    snprintf(copy, sizeof copy, "%s", list ? list : "");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long r = bfo_railsel_slot(s, t); /* a network first: 127.0.0.3 is no index */
        if (r < 0 && (r = strtol(t, &end, 10), end == t || *end || r < 0 || r >= s->nslots))
            r = -1;
        if (r >= 0) {
            m |= 1u << r;
            continue;
        }
        if (strspn(t, "0123456789") != strlen(t) && !strchr(t, '=')) {
            mca_pml_bfo_log(1, "pml_bfo_standby_rails: %s names no rail of this rank", t);
            continue; /* a network or an interface this host does not have */
        }
        fprintf(stderr, "pml bfo: pml_bfo_standby_rails \"%s\": \"%s\" is not a rail index from 0 to %d or a "
                        "network\n", list, t, s->nslots - 1);
        return -1;
    }
    return (long)m;
}

/* ---------------------------------------------------- memory release hook
 *
 * The verbs transport caches registrations by virtual address; a buffer
 * that goes back to the system and is mapped again at the same address
 * would be reached through the old pages.  Open MPI's memory hooks (the
 * memory patcher) tell of every range that goes: each is passed to
 * bfo_net_mem_released.  The callback runs inside munmap/free/brk/madvise,
 * in any thread, possibly one that holds the PML's lock or is inside
 * bfo_net: it takes no lock and allocates nothing (bfo_net and verbs only
 * mark there).  Open MPI's unregister does not wait for a callback running
 * in another thread, so the net is published through hook_net and
 * finalize waits for hook_inflight to drain before bfo_net_fini. */
static bfo_net *hook_net;  /* __atomic: the net callbacks may use, or NULL */
static int hook_inflight;  /* __atomic: callbacks between their two counts */
static int hook_registered;

static void pml_bfo_mem_release(void *buf, size_t length, void *cbdata, bool from_alloc)
{
    bfo_net *n;
    (void)cbdata;
    (void)from_alloc;
    __atomic_add_fetch(&hook_inflight, 1, __ATOMIC_SEQ_CST);
    n = __atomic_load_n(&hook_net, __ATOMIC_SEQ_CST);
    if (n)
        bfo_net_mem_released(n, buf, length);
    __atomic_sub_fetch(&hook_inflight, 1, __ATOMIC_SEQ_CST);
}

/* Before bfo_net starts (so that no registration is ever cached while no
 * hook is in place): with a transport in use that keeps registrations
 * beyond a request (bfo_net_tuning.mem_release: verbs), registers the
 * release hook, whose callbacks do nothing until mem_hooks_publish gives
 * them the net.  When Open MPI has no memory hooks, or the registration
 * fails, those caches are turned off (register per request): a cache
 * nobody tells of released memory would hand out stale pages. */
static void mem_hooks_register(const char *rails, const bfo_net_tuning *tun, bfo_net_options *opt)
{
    const int want = OPAL_MEMORY_FREE_SUPPORT | OPAL_MEMORY_MUNMAP_SUPPORT;
    if (!tun->mem_release)
        return; /* no registration outlives its request */
    (void)mca_base_framework_open(&opal_memory_base_framework, 0); /* as rcache and common ucx do */
    if ((opal_mem_hooks_support_level() & want) != want) {
        (void)bfo_net_options_uncached(opt, rails);
        mca_pml_bfo_log(1, "Open MPI's memory hooks are not available (memory patcher off?): the "
                           "registration caches are off, every rendezvous buffer is registered for its request");
        return;
    }
    if (opal_mem_hooks_register_release(pml_bfo_mem_release, NULL) != OPAL_SUCCESS) {
        (void)bfo_net_options_uncached(opt, rails);
        mca_pml_bfo_log(1, "opal_mem_hooks_register_release failed: the registration caches are off, "
                           "every rendezvous buffer is registered for its request");
        return;
    }
    hook_registered = 1;
    mca_pml_bfo_log(1, "registration caches on, kept valid by Open MPI's memory release hook");
}

/* Once bfo_net runs: the callbacks pass released ranges to it. */
static void mem_hooks_publish(bfo_net *n)
{
    if (hook_registered)
        __atomic_store_n(&hook_net, n, __ATOMIC_SEQ_CST);
}

/* Before bfo_net_fini: no callback uses the net any more. */
void mca_pml_bfo_mem_hooks_stop(void)
{
    if (hook_registered) {
        opal_mem_hooks_unregister_release(pml_bfo_mem_release);
        hook_registered = 0;
    }
    __atomic_store_n(&hook_net, NULL, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&hook_inflight, __ATOMIC_SEQ_CST) != 0)
        ; /* a callback in another thread, a scan of the cache long */
}

int mca_pml_bfo_init(int enable_mpi_threads)
{
    static char rails[1024];
    bfo_config cfg;
    bfo_net_options opt;
    bfo_net_tuning tun;
    bfo_boot *boot = NULL;
    bfo_boot_ops ops;
    static bfo_railsel sel;
    static char nets[BFO_MAX_RAILS * (BFO_RAILSEL_NAME_MAX + 1)];
    char tune_list[1024];
    long standby;
    int rc;

    mca_pml_bfo.rank = (int)OMPI_PROC_MY_NAME->vpid;
    mca_pml_bfo.size = (int)ompi_process_info.num_procs;
    mca_pml_bfo.jobid = OMPI_PROC_MY_NAME->jobid;
    /* no BFO_RAILS: under mpirun every setting is an MCA parameter (one
     * host's environment must not make its ranks differ: opt.no_env below) */
    if ((rc = rails_pick(&sel, rails, sizeof rails)) != OMPI_SUCCESS)
        return rc;
    mca_pml_bfo.rails_resolved = rails;
    nets[0] = 0;
    for (int g = 0; g < sel.nslots; g++)
        snprintf(nets + strlen(nets), sizeof nets - strlen(nets), "%s%s", g ? "," : "", sel.slot[g]);
    mca_pml_bfo.rail_nets = nets;
    /* the sizes follow the job's rails, not this host's: a place another
     * host fills ("-") is one of its networks, a TCP rail, so that every
     * rank takes the same defaults */
    tune_list[0] = 0;
    for (int g = 0; g < sel.nslots; g++)
        snprintf(tune_list + strlen(tune_list), sizeof tune_list - strlen(tune_list), "%s%s", g ? "," : "",
                 sel.mine[g] >= 0 ? sel.r[sel.mine[g]].rail : "0.0.0.0");
    if (bfo_net_rail_tuning(tune_list, &tun) < 0) {
        fprintf(stderr, "pml bfo: pml_bfo_rails \"%s\": no transport of this build (%s) takes it\n", rails,
                bfo_net_transports());
        return OMPI_ERR_BAD_PARAM;
    }
    if ((standby = standby_mask(mca_pml_bfo.standby_rails, &sel)) < 0)
        return OMPI_ERR_BAD_PARAM;
    memset(&ops, 0, sizeof ops);
    ops.publish = modex_publish;
    ops.lookup = modex_lookup;
    ops.lookup_later = 1; /* MPI_Init fences after the PML is selected */
    rc = bfo_boot_custom(&boot, mca_pml_bfo.rank, mca_pml_bfo.size, mca_pml_bfo.jobid, &ops);
    if (rc != BFO_OK)
        return OMPI_ERROR;

    memset(&cfg, 0, sizeof cfg);
    cfg.done_queue = 1;
    cfg.source_ok = mca_pml_bfo_source_ok; /* MPI_SOURCE is a rank of the communicator */
    cfg.max_requests = 4096;
    cfg.max_unexpected = 1024;
    cfg.eager_limit = mca_pml_bfo.eager_limit > 0 ? (size_t)mca_pml_bfo.eager_limit : 0;
    /* 0: what the transports in use want (their rows' tuning: 8 KiB with
     * shared memory and no other RDMA transport), else the engine's */
    cfg.rdma_min = mca_pml_bfo.rdma_min > 0 ? (size_t)mca_pml_bfo.rdma_min : tun.rdma_min;
    if (mca_pml_bfo.rdma < BFO_RDMA_AUTO || mca_pml_bfo.rdma > BFO_RDMA_OFF) {
        fprintf(stderr, "pml bfo: pml_bfo_rdma %d: must be 0 (auto), 1 (GET), 2 (PUT) or 3 (off)\n",
                mca_pml_bfo.rdma);
        return OMPI_ERR_BAD_PARAM;
    }
    cfg.rdma = mca_pml_bfo.rdma;
    cfg.rdma_frag_size = mca_pml_bfo.rdma_frag_size > 0 ? (size_t)mca_pml_bfo.rdma_frag_size : tun.rdma_frag_size;
    cfg.frag_size = mca_pml_bfo.frag_size > 0 ? (size_t)mca_pml_bfo.frag_size : tun.frag_size;
    cfg.unexpected_budget = mca_pml_bfo.unexpected_budget;
    cfg.heartbeat_ns = (uint64_t)mca_pml_bfo.heartbeat_ms * 1000000u;
    cfg.probe_timeout_ns = (uint64_t)mca_pml_bfo.probe_timeout_ms * 1000000u;
    cfg.silence_ns = (uint64_t)mca_pml_bfo.silence_ms * 1000000u;
    cfg.unreachable_grace_ns = (uint64_t)mca_pml_bfo.peer_timeout_ms * 1000000u;
    cfg.relay = mca_pml_bfo.relay == 1;
    cfg.standby_rails = (unsigned)standby;
    memset(&opt, 0, sizeof opt);
    /* every setting from the MCA parameters above: bfo_net reads no BFO_*
     * variable (BFO_RELAY on one host would turn relay on for its ranks
     * only; BFO_EAGER_LIMIT=garbage would fail MPI_Init there) */
    opt.no_env = 1;
    opt.rails = rails;
    {
        static const char *names[BFO_MAX_RAILS];
        for (int g = 0; g < sel.nslots; g++)
            names[g] = sel.slot[g];
        opt.rail_names = names; /* logs and dumps name each rail's network */
    }
    if ((rc = settings_apply(&opt)) != OMPI_SUCCESS) {
        bfo_boot_fini(boot);
        return rc;
    }
    opt.limits = !limits_param || !strcmp(limits_param, "fail") ? BFO_NET_LIMITS_FAIL
                 : !strcmp(limits_param, "warn")                  ? BFO_NET_LIMITS_WARN
                 : !strcmp(limits_param, "off")                   ? BFO_NET_LIMITS_OFF : 0;
    if (!opt.limits) {
        fprintf(stderr, "pml bfo: pml_bfo_limits %s: not fail, warn or off\n", limits_param);
        bfo_boot_fini(boot);
        return OMPI_ERR_BAD_PARAM;
    }
    opt.thread_safe = enable_mpi_threads ? 1 : 0;
    opt.progress_thread = mca_pml_bfo.progress_thread > 0 ? 1 : -1;
    /* verbose 0: the transports say nothing of what bfo handles (a rail
     * failing over, reconnecting); what the program must know reaches it
     * as an MPI error */
    opt.log_level = mca_pml_bfo.verbose > 0 ? mca_pml_bfo.verbose : -1;
    mca_pml_bfo.thread_multiple = enable_mpi_threads;
    mem_hooks_register(rails, &tun, &opt);
    rc = bfo_net_init_boot(&mca_pml_bfo.net, &cfg, &opt, boot);
    if (rc != BFO_OK) {
        mca_pml_bfo_mem_hooks_stop();
        fprintf(stderr, "pml bfo: rank %d: bfo_net could not start on rails \"%s\": %s\n", mca_pml_bfo.rank,
                rails, bfo_net_errname(rc));
        mca_pml_bfo.net = NULL;
        return OMPI_ERROR;
    }
    mca_pml_bfo.eng = bfo_net_engine(mca_pml_bfo.net);
    mem_hooks_publish(mca_pml_bfo.net);
    mca_pml_bfo.err_code = (int *)calloc((size_t)mca_pml_bfo.size, sizeof(int));
    mca_pml_bfo.err_left = (int *)calloc((size_t)mca_pml_bfo.size, sizeof(int));
    mca_pml_bfo.err_failed = (int *)calloc((size_t)mca_pml_bfo.size, sizeof(int));
    if (!mca_pml_bfo.err_code || !mca_pml_bfo.err_left || !mca_pml_bfo.err_failed)
        return OMPI_ERR_OUT_OF_RESOURCE;
    /* what the engine took, whatever the environment says (tests/pml: pml.env_ignored) */
    mca_pml_bfo_log(1, "rank %d of %d, rails %s (%d), eager limit %zu, unexpected budget %zu, relay %d, "
                    "standby rails 0x%x, progress thread %d", mca_pml_bfo.rank, mca_pml_bfo.size, rails,
                    bfo_net_nrails(mca_pml_bfo.net), mca_pml_bfo.eng->cfg.eager_limit,
                    mca_pml_bfo.eng->cfg.unexpected_budget, mca_pml_bfo.eng->cfg.relay,
                    mca_pml_bfo.eng->cfg.standby_rails, bfo_net_progress_thread(mca_pml_bfo.net));
    return OMPI_SUCCESS;
}

static mca_pml_base_module_t *component_init(int *priority, bool enable_progress_threads,
                                             bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    if (!asked_for()) /* installed, and not asked for: nothing done */
        return NULL;
    if (getenv("OMPI_PARENT_PORT")) { /* started by MPI_Comm_spawn: its parent is another job */
        fprintf(stderr, "pml bfo: this process was started by MPI_Comm_spawn: pml bfo does not support dynamic "
                        "processes (its engine's peers are the ranks of one MPI_COMM_WORLD); run the job with "
                        "another pml (ob1)\n");
        return NULL;
    }
    if (mca_pml_bfo_open() != OMPI_SUCCESS || mca_pml_bfo_init(enable_mpi_threads) != OMPI_SUCCESS)
        return NULL;
    *priority = mca_pml_bfo.priority;
    return &mca_pml_bfo.super;
}

static int component_fini(void) { return mca_pml_bfo_finalize(); }
