// SPDX-License-Identifier: BSD-3-Clause
/* bfo_demo.c - `bfo demo`: the README's main job.
 *
 *   bfo demo [--rails A,B] [--duration SEC] [--no-faults]
 *
 * Two processes, two rails (default 127.0.0.2 and 127.0.0.3: loopback
 * addresses no other program uses), a stream of mixed eager and rendezvous
 * messages with every byte verified (`bfo run -n 2 -- bfo stream`).  At 30%
 * of the run it resets every connection of rail 0 from outside (ss -K); at
 * 60% it makes rail 1 silently drop every packet for 1.5 s (an nftables
 * rule on the rail's address when nft works, else the TCP backend's fault
 * hook through SIGUSR1).  Rank 0 prints per-rail throughput and rail states
 * every 250 ms; at the end the demo says whether the stream completed, how
 * many failovers and re-admissions there were and how long recovery took.
 * Exit status: the stream's (0 only if every message arrived exactly once
 * with the right bytes).  Needs root for ss -K and nft.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int bfo_cmd_demo(int argc, char **argv);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
    for (double d; (d = t - now_s()) > 0;) {
        struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
        nanosleep(&ts, NULL);
    }
}

static int sh(const char *cmd)
{
    int rc = system(cmd);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A number from the stream's JSON line, or -1. */
static double json_num(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(json, pat);
    return p ? atof(p + strlen(pat)) : -1;
}

/* SIGUSR1 to every rank in the pid file (toggles the fault hook). */
static void signal_ranks(const char *pidfile)
{
    FILE *f = fopen(pidfile, "r");
    int rank, pid;
    if (!f)
        return;
    while (fscanf(f, "%d %d", &rank, &pid) == 2)
        kill(pid, SIGUSR1);
    fclose(f);
}

int bfo_cmd_demo(int argc, char **argv)
{
    const char *rails = "127.0.0.2,127.0.0.3";
    double duration = 8;
    int faults = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rails") && i + 1 < argc)
            rails = argv[++i];
        else if (!strcmp(argv[i], "--duration") && i + 1 < argc)
            duration = atof(argv[++i]);
        else if (!strcmp(argv[i], "--no-faults"))
            faults = 0;
        else {
            fprintf(stderr, "usage: bfo demo [--rails A,B] [--duration SEC] [--no-faults]\n");
            return 2;
        }
    }
    char a0[64], a1[64];
    if (sscanf(rails, "%63[^,],%63s", a0, a1) != 2) {
        fprintf(stderr, "bfo demo: --rails wants two addresses\n");
        return 2;
    }
    const char *r0 = strncmp(a0, "tcp:", 4) ? a0 : a0 + 4, *r1 = strncmp(a1, "tcp:", 4) ? a1 : a1 + 4;
    char self[4096], pidfile[] = "/tmp/bfo-demo-pids.XXXXXX", dur[32], cmd[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    int fd = mkstemp(pidfile), out[2];
    if (n <= 0 || fd < 0 || pipe(out) != 0) {
        perror("bfo demo");
        return 1;
    }
    close(fd);
    self[n] = 0;
    snprintf(dur, sizeof dur, "%g", duration);
    printf("bfo demo: 2 processes, rails %s and %s, a verified stream for %g s\n", r0, r1, duration);
    if (faults)
        printf("  at %.1f s: every connection of rail 0 reset from outside (ss -K)\n"
               "  at %.1f s: rail 1 silently drops every packet for 1.5 s\n",
               duration * 0.3, duration * 0.6);
    fflush(stdout);
    double t0 = now_s();
    pid_t child = fork();
    if (child == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        execl(self, self, "run", "-n", "2", "--rails", rails, "--timeout", "90", "--pidfile", pidfile,
              "--", self, "stream", "--duration", dur, "--timeline", "250", "--json", "--silence-ms",
              "300", "--heartbeat-ms", "50", "--probe-timeout-ms", "40", "--drop-on-signal", "1",
              "--timeout", "60", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    int used_nft = 0;
    if (faults) {
        sleep_until(t0 + duration * 0.3);
        fprintf(stderr, "bfo demo: %.2f s: resetting rail 0 (%s): ss -K dst %s; ss -K src %s\n",
                now_s() - t0, r0, r0, r0);
        snprintf(cmd, sizeof cmd, "ss -K dst %s >/dev/null 2>&1; ss -K src %s >/dev/null 2>&1", r0, r0);
        if (sh(cmd) != 0)
            fprintf(stderr, "bfo demo: ss -K failed (root and iproute2 needed)\n");
        sleep_until(t0 + duration * 0.6);
        snprintf(cmd, sizeof cmd,
                 "nft add table inet bfo_demo && nft add chain inet bfo_demo in "
                 "'{ type filter hook input priority 0 ; }' && "
                 "nft add rule inet bfo_demo in ip saddr %s drop && "
                 "nft add rule inet bfo_demo in ip daddr %s drop", r1, r1);
        used_nft = sh("command -v nft >/dev/null 2>&1") == 0 && sh(cmd) == 0;
        if (!used_nft) {
            sh("nft delete table inet bfo_demo >/dev/null 2>&1");
            signal_ranks(pidfile);
        }
        fprintf(stderr, "bfo demo: %.2f s: rail 1 (%s) silently dropping packets (%s)\n", now_s() - t0,
                r1, used_nft ? "nftables rule" : "the backend's fault hook");
        sleep_until(t0 + duration * 0.6 + 1.5);
        if (used_nft)
            sh("nft delete table inet bfo_demo");
        else
            signal_ranks(pidfile);
        fprintf(stderr, "bfo demo: %.2f s: rail 1 delivers again\n", now_s() - t0);
    }
    char json[4096] = "";
    size_t len = 0;
    for (ssize_t k; (k = read(out[0], json + len, sizeof json - 1 - len)) > 0;)
        len += (size_t)k;
    json[len] = 0;
    close(out[0]);
    int status = 0;
    waitpid(child, &status, 0);
    unlink(pidfile);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    double msgs = json_num(json, "messages"), ver = json_num(json, "verified");
    printf("\nbfo demo: the stream %s: %.0f messages, %.0f verified, %.0f lost, %.0f duplicates, "
           "%.0f corrupt\n", rc == 0 ? "completed" : "FAILED", msgs, ver, json_num(json, "lost"),
           json_num(json, "duplicates"), json_num(json, "corrupt"));
    printf("  failovers %.0f, re-admissions %.0f; from a rail error to the next message: at most "
           "%.1f ms; longest gap between messages %.1f ms (a silent rail is found by a "
           "heartbeat probe: %d ms heartbeat + %d ms probe timeout; %d ms silence backstop)\n",
           json_num(json, "failovers"), json_num(json, "readmissions"),
           json_num(json, "recovery_ms_max"), json_num(json, "stall_ms_max"), 50, 40, 300);
    if (len)
        printf("  %s", json);
    return rc;
}
