// SPDX-License-Identifier: BSD-3-Clause
/* bfo_railsel.c - which rails a rank uses (see bfo_railsel.h). */
#define _GNU_SOURCE
#include "bfo_railsel.h"
#include "bfo_net.h"

_Static_assert(sizeof(((bfo_railsel_rail *)0)->why) >= sizeof(((bfo_railsel_rail *)0)->rail) &&
                   sizeof(((bfo_railsel *)0)->slot[0]) == sizeof(((bfo_railsel_rail *)0)->net),
               "the copies below: why takes a rail, a slot a network");

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* ------------------------------------------------------------ the host */

static int mask_bits(const uint8_t *m, int len)
{
    int bits = 0;
    for (int i = 0; i < len; i++)
        for (int b = 7; b >= 0 && (m[i] >> b) & 1; b--)
            bits++;
    return bits;
}

/* The interface's driver, as ethtool names it ("" when it says nothing:
 * loopback, or no permission). */
static void driver_of(int fd, const char *name, char *out, size_t cap)
{
    struct ifreq ifr;
    struct ethtool_drvinfo info;
    out[0] = 0;
    if (fd < 0)
        return;
    memset(&ifr, 0, sizeof ifr);
    memset(&info, 0, sizeof info);
    info.cmd = ETHTOOL_GDRVINFO;
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%.*s", IFNAMSIZ - 1, name);
    ifr.ifr_data = (char *)&info;
    if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
        snprintf(out, cap, "%.*s", (int)sizeof info.driver, info.driver);
}

int bfo_railsel_host(bfo_railsel_if *out, int cap)
{
    static const char *const bridges[] = { "bridge", "tun", "openvswitch", "dummy", NULL };
    struct ifaddrs *ifs = NULL;
    int n = 0, fd;
    if (getifaddrs(&ifs) != 0)
        return -1;
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (struct ifaddrs *i = ifs; i && n < cap; i = i->ifa_next) {
        bfo_railsel_if *o = &out[n];
        int fam = i->ifa_addr ? i->ifa_addr->sa_family : 0;
        if (fam != AF_INET && fam != AF_INET6)
            continue;
        memset(o, 0, sizeof *o);
        snprintf(o->name, sizeof o->name, "%s", i->ifa_name);
        if (fam == AF_INET) {
            o->family = 4;
            memcpy(o->addr, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
            o->prefix = i->ifa_netmask ? mask_bits((uint8_t *)&((struct sockaddr_in *)i->ifa_netmask)->sin_addr, 4) : 32;
        } else {
            o->family = 6;
            memcpy(o->addr, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
            o->prefix =
                i->ifa_netmask ? mask_bits((uint8_t *)&((struct sockaddr_in6 *)i->ifa_netmask)->sin6_addr, 16) : 128;
        }
        o->flags = (i->ifa_flags & IFF_UP ? BFO_RAILSEL_UP : 0u) | (i->ifa_flags & IFF_RUNNING ? BFO_RAILSEL_RUNNING : 0u) |
                   (i->ifa_flags & IFF_LOOPBACK ? BFO_RAILSEL_LOOPBACK : 0u);
        driver_of(fd, o->name, o->driver, sizeof o->driver);
        for (int b = 0; bridges[b]; b++)
            if (!strcmp(o->driver, bridges[b]))
                o->flags |= BFO_RAILSEL_BRIDGE;
        n++;
    }
    if (fd >= 0)
        close(fd);
    freeifaddrs(ifs);
    return n;
}

/* ------------------------------------------------------- addresses, CIDRs */

static int fail(bfo_railsel *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return BFO_ERR_INVALID;
}

static void note(char *buf, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(buf);
    va_list ap;
    if (used + 3 >= cap)
        return;
    if (used)
        used += (size_t)snprintf(buf + used, cap - used, ", ");
    va_start(ap, fmt);
    vsnprintf(buf + used, cap - used, fmt, ap);
    va_end(ap);
}

static int addr_parse(const char *text, int *family, uint8_t *addr)
{
    if (inet_pton(AF_INET, text, addr) == 1) {
        *family = 4;
        return 0;
    }
    if (inet_pton(AF_INET6, text, addr) == 1) {
        *family = 6;
        return 0;
    }
    return -1;
}

/* "10.1.0.0/16", "fd00::/64": 0, or -1 for anything else. */
static int cidr_parse(const char *text, int *family, uint8_t *net, int *bits)
{
    char a[INET6_ADDRSTRLEN];
    const char *slash = strchr(text, '/');
    char *end;
    long b;
    if (!slash || (size_t)(slash - text) >= sizeof a)
        return -1;
    memcpy(a, text, (size_t)(slash - text));
    a[slash - text] = 0;
    if (addr_parse(a, family, net) != 0 || !slash[1])
        return -1;
    b = strtol(slash + 1, &end, 10);
    if (*end || b < 0 || b > (*family == 4 ? 32 : 128))
        return -1;
    *bits = (int)b;
    return 0;
}

static int in_prefix(const uint8_t *a, const uint8_t *net, int bits)
{
    for (int i = 0; bits > 0; i++, bits -= 8) {
        uint8_t m = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));
        if ((a[i] & m) != (net[i] & m))
            return 0;
    }
    return 1;
}

/* The network a (family, addr, bits) is on, as text: "10.36.1.0/24". */
static void net_name(int family, const uint8_t *addr, int bits, char *out, size_t cap)
{
    uint8_t m[16] = { 0 };
    char a[INET6_ADDRSTRLEN];
    int len = family == 4 ? 4 : 16;
    for (int i = 0; i < len; i++) {
        int b = bits - 8 * i;
        m[i] = addr[i] & (b >= 8 ? 0xff : b > 0 ? (uint8_t)(0xff << (8 - b)) : 0);
    }
    inet_ntop(family == 4 ? AF_INET : AF_INET6, m, a, sizeof a);
    snprintf(out, cap, "%s/%d", a, bits);
}

/* What bfo_net's TCP transport takes for the address. */
static void rail_text(const bfo_railsel_if *i, char *out, size_t cap)
{
    char a[INET6_ADDRSTRLEN];
    inet_ntop(i->family == 4 ? AF_INET : AF_INET6, i->addr, a, sizeof a);
    snprintf(out, cap, i->family == 4 ? "%s" : "tcp:[%s]", a);
}

static int usable6(const bfo_railsel_if *i)
{
    static const uint8_t lo6[16] = { [15] = 1 };
    return i->family == 6 && !(i->addr[0] == 0xfe && (i->addr[1] & 0xc0) == 0x80) && memcmp(i->addr, lo6, 16) != 0;
}

/* The address a rail on interface name uses: its first IPv4 one, else its
 * first global IPv6 one; NULL when it has neither. */
static const bfo_railsel_if *if_addr(const bfo_railsel_if *ifs, int nifs, const char *name)
{
    const bfo_railsel_if *v6 = NULL;
    for (int k = 0; k < nifs; k++)
        if (!strcmp(ifs[k].name, name)) {
            if (ifs[k].family == 4)
                return &ifs[k];
            if (!v6 && usable6(&ifs[k]))
                v6 = &ifs[k];
        }
    return v6;
}

static int if_known(const bfo_railsel_if *ifs, int nifs, const char *name)
{
    for (int k = 0; k < nifs; k++)
        if (!strcmp(ifs[k].name, name))
            return 1;
    return 0;
}

/* ------------------------------------------------------------ the pick */

static bfo_railsel_rail *add(bfo_railsel *s, int entry, int found, const char *net)
{
    bfo_railsel_rail *r;
    if (s->n >= BFO_RAILSEL_CAND_MAX)
        return NULL;
    r = &s->r[s->n++];
    memset(r, 0, sizeof *r);
    r->entry = entry;
    r->found = found;
    snprintf(r->net, sizeof r->net, "%s", net);
    snprintf(r->rail, sizeof r->rail, "%s", BFO_NET_RAIL_ABSENT);
    return r;
}

static const bfo_railsel_rail *by_net(const bfo_railsel *s, const char *net)
{
    for (int k = 0; k < s->n; k++)
        if (!strcmp(s->r[k].net, net))
            return &s->r[k];
    return NULL;
}

/* A rail on interface i's network (named or auto): 0, or -1 when full. */
static int add_found(bfo_railsel *s, int entry, const bfo_railsel_if *i)
{
    char net[BFO_RAILSEL_NAME_MAX], host[64] = "";
    const bfo_railsel_rail *same;
    bfo_railsel_rail *r;
    net_name(i->family, i->addr, i->prefix, net, sizeof net);
    if (i->flags & BFO_RAILSEL_LOOPBACK) { /* every host's own: it reaches no other host */
        (void)gethostname(host, sizeof host - 1);
        size_t l = strlen(net), h = strnlen(host, sizeof net - l - 2); /* "NET@host", cut to fit */
        net[l] = '@';
        memcpy(net + l + 1, host, h);
        net[l + 1 + h] = 0;
    }
    if ((same = by_net(s, net))) {
        note(s->skipped, sizeof s->skipped, "%s (on %s, as %s)", i->name, net, same->ifname[0] ? same->ifname : same->net);
        return 0;
    }
    if (!(r = add(s, entry, 1, net)))
        return -1;
    snprintf(r->ifname, sizeof r->ifname, "%s", i->name);
    rail_text(i, r->rail, sizeof r->rail);
    memcpy(r->why, r->rail, sizeof r->rail); /* NUL within: why is the larger */
    return 0;
}

static const char *const virtual_names[] = { "docker", "virbr", "br-", "veth", "vnet", "tap", "tun", "lxc", "cni",
                                             "flannel", "cali", "kube", "weave", "vxlan", "podman", "zt", NULL };

/* Why auto leaves interface i out ("" when it takes it). */
static const char *auto_skips(const bfo_railsel_if *ifs, int nifs, const bfo_railsel_if *i)
{
    if (i->flags & BFO_RAILSEL_LOOPBACK)
        return "loopback";
    if (!(i->flags & BFO_RAILSEL_UP))
        return "down";
    if (!(i->flags & BFO_RAILSEL_RUNNING))
        return "no carrier";
    if (i->flags & BFO_RAILSEL_BRIDGE)
        return i->driver[0] ? i->driver : "a bridge";
    for (int v = 0; virtual_names[v]; v++)
        if (!strncmp(i->name, virtual_names[v], strlen(virtual_names[v])))
            return "virtual";
    if (!if_addr(ifs, nifs, i->name))
        return "no IPv4 or global IPv6 address";
    return "";
}

/* Is interface i (or its address) among the excluded ("^...")? */
static int excluded(const char *excl, const bfo_railsel_if *ifs, int nifs, const bfo_railsel_if *i)
{
    char copy[512], *save = NULL;
    const bfo_railsel_if *a = if_addr(ifs, nifs, i->name);
    snprintf(copy, sizeof copy, "%s", excl);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int fam, bits;
        uint8_t net[16];
        if (!strcmp(t, i->name))
            return 1;
        if (a && cidr_parse(t, &fam, net, &bits) == 0 && fam == a->family && in_prefix(a->addr, net, bits))
            return 1;
    }
    return 0;
}

static int pick_auto(bfo_railsel *s, int entry, const char *excl, const bfo_railsel_if *ifs, int nifs)
{
    for (int k = 0; k < nifs; k++) {
        const bfo_railsel_if *i = &ifs[k];
        const char *why;
        int seen = 0;
        for (int j = 0; j < k; j++)
            seen |= !strcmp(ifs[j].name, i->name);
        if (seen) /* one look per interface, not per address */
            continue;
        if (excl && excluded(excl, ifs, nifs, i)) {
            note(s->skipped, sizeof s->skipped, "%s (excluded)", i->name);
            continue;
        }
        if (*(why = auto_skips(ifs, nifs, i))) {
            note(s->skipped, sizeof s->skipped, "%s (%s)", i->name, why);
            continue;
        }
        if (add_found(s, entry, if_addr(ifs, nifs, i->name)) != 0)
            return fail(s, "auto: more than %d networks on this host", BFO_RAILSEL_CAND_MAX);
    }
    return BFO_OK;
}

/* This host's first address in a network (never loopback, never IPv6
 * link-local), or NULL. */
static const bfo_railsel_if *net_hit(const bfo_railsel_if *ifs, int nifs, int fam, const uint8_t *net, int bits)
{
    for (int k = 0; k < nifs; k++)
        if (ifs[k].family == fam && !(ifs[k].flags & BFO_RAILSEL_LOOPBACK) && (fam == 4 || usable6(&ifs[k])) &&
            in_prefix(ifs[k].addr, net, bits))
            return &ifs[k];
    return NULL;
}

/* The rail of a network the value names (a CIDR, a group): this host's
 * address hit on it, or "-". */
static int add_named(bfo_railsel *s, int entry, const char *name, const bfo_railsel_if *hit)
{
    bfo_railsel_rail *r = add(s, entry, 0, name);
    if (!r)
        return fail(s, "more than %d rails", BFO_RAILSEL_CAND_MAX);
    if (hit) {
        snprintf(r->ifname, sizeof r->ifname, "%s", hit->name);
        rail_text(hit, r->rail, sizeof r->rail);
        memcpy(r->why, r->rail, sizeof r->rail); /* NUL within: why is the larger */
    } else
        snprintf(r->why, sizeof r->why, "no address in it here");
    return BFO_OK;
}

/* "NAME=CIDR+CIDR": the group's rail (this host's address in any). */
static int pick_group(bfo_railsel *s, int entry, char *t, const bfo_railsel_if *ifs, int nifs)
{
    char *eq = strchr(t, '='), *save = NULL;
    const bfo_railsel_if *hit = NULL;
    *eq = 0;
    if (!*t || strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != strlen(t))
        return fail(s, "\"%s\": a network group's name is letters, digits, '_', '.', '-'", t);
    if (by_net(s, t))
        return fail(s, "\"%s\": named twice", t);
    for (char *c = strtok_r(eq + 1, "+", &save); c; c = strtok_r(NULL, "+", &save)) {
        int fam, bits;
        uint8_t net[16];
        if (cidr_parse(c, &fam, net, &bits) != 0)
            return fail(s, "network group %s: \"%s\" is not a CIDR (10.1.0.0/16, fd00::/64)", t, c);
        if (!hit)
            hit = net_hit(ifs, nifs, fam, net, bits);
    }
    return add_named(s, entry, t, hit);
}

static int pick_cidr(bfo_railsel *s, int entry, const char *t, const bfo_railsel_if *ifs, int nifs)
{
    int fam, bits;
    uint8_t net[16];
    char name[BFO_RAILSEL_NAME_MAX];
    if (cidr_parse(t, &fam, net, &bits) != 0)
        return fail(s, "\"%s\" is not a CIDR (10.1.0.0/16, fd00::/64)", t);
    net_name(fam, net, bits, name, sizeof name);
    if (by_net(s, name))
        return fail(s, "\"%s\": the network %s is named twice", t, name);
    return add_named(s, entry, name, net_hit(ifs, nifs, fam, net, bits));
}

static int is_literal(const char *t)
{
    char a[INET6_ADDRSTRLEN + 2];
    int fam;
    uint8_t b[16];
    size_t n;
    if (!strncmp(t, "tcp:", 4))
        return 1;
    n = strlen(t);
    if (n >= 2 && t[0] == '[' && t[n - 1] == ']' && n - 2 < sizeof a) {
        memcpy(a, t + 1, n - 2);
        a[n - 2] = 0;
        t = a;
    }
    return addr_parse(t, &fam, b) == 0;
}

/* 127.0.0.0/8 or ::1, as a literal rail names it ("tcp:[::1]"). */
static int is_loopback_literal(const char *t)
{
    static const uint8_t lo6[16] = { [15] = 1 };
    char a[INET6_ADDRSTRLEN];
    size_t n;
    int fam;
    uint8_t b[16];
    if (!strncmp(t, "tcp:", 4))
        t += 4;
    n = strlen(t);
    if (n >= 2 && t[0] == '[' && t[n - 1] == ']') {
        t++;
        n -= 2;
    }
    if (n >= sizeof a)
        return 0;
    memcpy(a, t, n);
    a[n] = 0;
    if (addr_parse(a, &fam, b) != 0)
        return 0;
    return fam == 4 ? b[0] == 127 : !memcmp(b, lo6, 16);
}

static int pick_entry(bfo_railsel *s, int entry, char *t, const char *excl, const bfo_railsel_if *ifs, int nifs)
{
    int optional = t[0] == '?';
    const bfo_railsel_if *a;
    if (optional)
        t++;
    if (!*t)
        return fail(s, "an empty entry");
    if (!strcmp(t, "auto"))
        return pick_auto(s, entry, excl, ifs, nifs);
    if (strchr(t, '='))
        return pick_group(s, entry, t, ifs, nifs);
    if (strchr(t, '/'))
        return pick_cidr(s, entry, t, ifs, nifs);
    if (!strcmp(t, "shm") || !strncmp(t, "verbs:", 6) || is_literal(t)) {
        bfo_railsel_rail *r;
        if (by_net(s, t))
            return fail(s, "\"%s\": named twice", t);
        if (!(r = add(s, entry, 0, t)))
            return fail(s, "more than %d rails", BFO_RAILSEL_CAND_MAX);
        snprintf(r->rail, sizeof r->rail, "%s", t);
        r->host_only = is_loopback_literal(t);
        snprintf(r->why, sizeof r->why, r->host_only ? "as named (loopback: one host only)" : "as named");
        return BFO_OK;
    }
    if (strlen(t) >= IFNAMSIZ || strpbrk(t, " :;"))
        return fail(s, "\"%s\": not a rail (a CIDR, NAME=CIDR+CIDR, an interface, ?interface, auto, shm, "
                       "verbs:DEVICE[:PORT], an address)", t);
    s->exchange = 1; /* every rank's networks make the job's rails: decided by the value, the same everywhere */
    a = if_addr(ifs, nifs, t);
    if (!a) {
        if (optional) {
            note(s->skipped, sizeof s->skipped, "%s (%s, optional)", t,
                 if_known(ifs, nifs, t) ? "no IPv4 or global IPv6 address" : "not on this host");
            return BFO_OK;
        }
        return fail(s, "interface %s: %s (?%s takes it only where present)", t,
                    if_known(ifs, nifs, t) ? "no IPv4 or global IPv6 address" : "not on this host", t);
    }
    return add_found(s, entry, a) == 0 ? BFO_OK : fail(s, "more than %d rails", BFO_RAILSEL_CAND_MAX);
}

int bfo_railsel_pick(bfo_railsel *s, const char *value, const bfo_railsel_if *ifs, int nifs)
{
    char copy[1024], *save = NULL;
    const char *excl = NULL;
    int entry = 0, rc = BFO_OK;
    memset(s, 0, sizeof *s);
    if (!value || !*value)
        value = "shm,auto";
    if (value[0] == '^') { /* the default without these */
        excl = value + 1;
        if (!*excl)
            return fail(s, "\"^\" excludes nothing");
        value = "shm,auto";
    }
    if (strlen(value) >= sizeof copy)
        return fail(s, "the value is over %zu bytes", sizeof copy - 1);
    snprintf(copy, sizeof copy, "%s", value);
    if (value[strlen(value) - 1] == ',' || strstr(value, ",,") || value[0] == ',')
        return fail(s, "\"%s\": an empty entry", value);
    for (char *t = strtok_r(copy, ",", &save); t && rc == BFO_OK; t = strtok_r(NULL, ",", &save), entry++) {
        if (excl && !strcmp(t, "shm") && excluded(excl, NULL, 0, &(bfo_railsel_if){ .name = "shm" }))
            continue;
        if (!strcmp(t, "auto") || (t[0] == '?' && !strcmp(t + 1, "auto")))
            s->exchange = 1;
        rc = pick_entry(s, entry, t, excl, ifs, nifs);
    }
    if (rc == BFO_OK && s->n == 0)
        return fail(s, "no rail on this host (%s%s%s)", value, s->skipped[0] ? "; skipped: " : "", s->skipped);
    return rc;
}

/* ------------------------------------------------------- the job's rails */

size_t bfo_railsel_nets(const bfo_railsel *s, char *out, size_t cap)
{
    size_t used = 0;
    int w;
    if (!cap)
        return 0;
    out[0] = 0;
    if (s->err[0]) {
        w = snprintf(out, cap, "!%s", s->err);
        return w > 0 && (size_t)w < cap ? (size_t)w : 0;
    }
    for (int k = 0; k < s->n; k++) {
        w = snprintf(out + used, cap - used, "%s%d %s", k ? ";" : "", s->r[k].entry, s->r[k].net);
        if (w < 0 || (size_t)w >= cap - used)
            return 0;
        used += (size_t)w;
    }
    return used;
}

/* The slots of the networks in order: mine[] from this rank's rails. */
static int slots_take(bfo_railsel *s)
{
    int have = 0;
    for (int g = 0; g < s->nslots; g++) {
        const bfo_railsel_rail *r = by_net(s, s->slot[g]);
        s->mine[g] = r && strcmp(r->rail, BFO_NET_RAIL_ABSENT) ? (int)(r - s->r) : -1;
        have += s->mine[g] >= 0;
    }
    if (!have)
        return fail(s, "none of the job's %d rail(s) is on this host", s->nslots);
    return BFO_OK;
}

typedef struct net_seen {
    int entry;
    char name[BFO_RAILSEL_NAME_MAX];
} net_seen;

static int seen_cmp(const void *a, const void *b)
{
    const net_seen *x = (const net_seen *)a, *y = (const net_seen *)b;
    return x->entry != y->entry ? (x->entry < y->entry ? -1 : 1) : strcmp(x->name, y->name);
}

int bfo_railsel_merge(bfo_railsel *s, const char *const *nets, int nranks)
{
    net_seen seen[4 * BFO_MAX_RAILS];
    int nseen = 0;
    for (int p = 0; p < nranks; p++) {
        const char *t = nets[p];
        if (!t)
            return fail(s, "rank %d published no networks", p);
        if (t[0] == '!')
            return fail(s, "rank %d could not pick its rails: %s", p, t + 1);
        while (*t) {
            char name[BFO_RAILSEL_NAME_MAX];
            int entry, len = 0, k;
            if (sscanf(t, "%d %63[^;]%n", &entry, name, &len) != 2 || len <= 0)
                return fail(s, "rank %d's networks are garbled", p);
            t += len;
            t += *t == ';';
            for (k = 0; k < nseen && strcmp(seen[k].name, name); k++)
                ;
            if (k < nseen) {
                if (entry < seen[k].entry)
                    seen[k].entry = entry;
                continue;
            }
            if (nseen == (int)(sizeof seen / sizeof seen[0]))
                return fail(s, "the job's hosts have over %d networks among them: at most %d rails", nseen,
                            BFO_MAX_RAILS);
            seen[nseen].entry = entry;
            snprintf(seen[nseen].name, sizeof seen[nseen].name, "%s", name);
            nseen++;
        }
    }
    qsort(seen, (size_t)nseen, sizeof seen[0], seen_cmp);
    if (nseen > BFO_MAX_RAILS) {
        char all[200] = "";
        for (int k = 0; k < nseen; k++)
            note(all, sizeof all, "%s", seen[k].name);
        return fail(s, "the job's hosts have %d networks among them (%s): at most %d rails; name fewer", nseen, all,
                    BFO_MAX_RAILS);
    }
    s->nslots = nseen;
    for (int k = 0; k < nseen; k++)
        snprintf(s->slot[k], sizeof s->slot[k], "%s", seen[k].name);
    return slots_take(s);
}

int bfo_railsel_local(bfo_railsel *s)
{
    char mine[4096];
    const char *one[1] = { mine };
    if (!bfo_railsel_nets(s, mine, sizeof mine))
        return fail(s, "this rank's networks do not fit in %zu bytes", sizeof mine);
    return bfo_railsel_merge(s, one, 1); /* the job's order, with this rank alone in it */
}

size_t bfo_railsel_list(const bfo_railsel *s, char *out, size_t cap)
{
    size_t used = 0;
    if (!cap)
        return 0;
    out[0] = 0;
    for (int g = 0; g < s->nslots; g++) {
        const char *r = s->mine[g] >= 0 ? s->r[s->mine[g]].rail : BFO_NET_RAIL_ABSENT;
        int w = snprintf(out + used, cap - used, "%s%s", g ? "," : "", r);
        if (w < 0 || (size_t)w >= cap - used)
            return 0;
        used += (size_t)w;
    }
    return used;
}

size_t bfo_railsel_describe(const bfo_railsel *s, char *out, size_t cap)
{
    size_t used = 0;
    if (!cap)
        return 0;
    out[0] = 0;
    for (int g = 0; g < s->nslots && used < cap; g++) {
        const bfo_railsel_rail *r = s->mine[g] >= 0 ? &s->r[s->mine[g]] : by_net(s, s->slot[g]);
        used += (size_t)snprintf(out + used, cap - used, "%s%d %s: %s%s%s", g ? "; " : "", g, s->slot[g],
                                 r && r->ifname[0] ? r->ifname : "", r && r->ifname[0] ? " " : "",
                                 s->mine[g] >= 0 ? r->why : r ? r->why : "not on this host");
    }
    if (s->skipped[0] && used < cap)
        used += (size_t)snprintf(out + used, cap - used, "; skipped: %s", s->skipped);
    return used < cap ? used : cap - 1;
}

int bfo_railsel_slot(const bfo_railsel *s, const char *net)
{
    for (int g = 0; g < s->nslots; g++)
        if (!strcmp(s->slot[g], net) || (s->mine[g] >= 0 && !strcmp(s->r[s->mine[g]].ifname, net)))
            return g;
    return -1;
}
