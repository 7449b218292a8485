# SPDX-License-Identifier: BSD-3-Clause
"""bench/scale/report.py RAW - the table of bench/scale/run.sh: per place
(one host, namespace hosts) and rank count, each figure's median over the
rounds under ob1 and pml/bfo, and the median of the same-round ratios
bfo/ob1; issue 37's targets at 64 ranks beside them (shown, not enforced).
Reads RAW/meta.txt, RAW/manifest.tsv, every run's "scale result" line,
RAW/sim_mem.txt (bfo sim --mem) and RAW/engine_mem.txt.  bench/scale/README.md says what every figure is."""
import os
import statistics
import sys

# (key in the scale result line, label, scale factor, format)
FIGURES = [
    ("init_s", "MPI_Init, slowest rank (s)", 1, "%.3f"),
    ("a2a_first_ms", "first alltoall 4 KiB/peer (ms)", 1, "%.2f"),
    ("a2a_warm_ms", "warm alltoall, median (ms)", 1, "%.2f"),
    ("ring_first_us", "first ring step 4 KiB (us)", 1, "%.0f"),
    ("ring_warm_us", "warm ring step, median (us)", 1, "%.0f"),
    ("pss_kib_init_mean", "PSS after MPI_Init (MiB/rank)", 1 / 1024, "%.1f"),
    ("pss_kib_end_mean", "PSS after the alltoalls (MiB/rank)", 1 / 1024, "%.1f"),
    ("fds_init_mean", "open fds after MPI_Init (/rank)", 1, "%.1f"),
    ("fds_barrier_mean", "open fds after a barrier (/rank)", 1, "%.1f"),
    ("sockets_init_mean", "sockets after MPI_Init (/rank)", 1, "%.1f"),
    ("sockets_barrier_mean", "sockets after a barrier (/rank)", 1, "%.1f"),
    ("sockets_end_mean", "sockets after the alltoalls (/rank)", 1, "%.1f"),
    ("vmpin_kib_end_max", "VmPin, largest rank (KiB)", 1, "%.0f"),
    ("vmlck_kib_end_max", "VmLck, largest rank (KiB)", 1, "%.0f"),
    ("idle_sleep_pkts_per_rank_s", "idle, asleep: packets/s/rank", 1, "%.1f"),
    ("idle_sleep_udp_per_rank_s", "  of which UDP datagrams", 1, "%.1f"),
    ("idle_probe_pkts_per_rank_s", "idle, MPI_Iprobe loop: packets/s/rank", 1, "%.1f"),
    ("idle_probe_udp_per_rank_s", "  of which UDP datagrams", 1, "%.1f"),
]
# issue 37's done-when targets, judged at 64 ranks: (key, bfo/ob1 limit)
RATIO_TARGETS = {"init_s": 1.1, "a2a_first_ms": 1.0, "a2a_warm_ms": 1.0, "pss_kib_end_mean": 1.2}
ABS_TARGETS = {"idle_sleep_pkts_per_rank_s": 100, "idle_probe_pkts_per_rank_s": 100}
TARGET_RANKS = 64
RAILS = 2  # shm and one TCP rail on one host; on hosts shm and two TCP rails


def parse_result(path):
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("scale result "):
                    out = {}
                    for kv in line.split()[2:]:
                        k, _, v = kv.partition("=")
                        try:
                            out[k] = float(v)
                        except ValueError:
                            pass
                    return out
    except OSError:
        pass
    return None


def fmt(fm, v):
    return "-" if v is None else fm % v


def sim_section(path):
    """The bfo sim run (run.sh: bfo sim --ranks N --exchange K:1K --grow
    --mem): its sim-mem line, and whether every message arrived."""
    mem, summary, passed = None, None, False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("sim-mem "):
                mem = dict(kv.partition("=")[::2] for kv in line.split()[1:])
            elif line.startswith("scenarios "):
                summary = line.strip()
            elif line.startswith("sim: 1 passed, 0 failed"):
                passed = True
    print()
    if not mem:
        print("== bfo sim: FAILED (no sim-mem line: %s)" % path)
        return
    n = int(mem["ranks"])
    print("== bfo sim, %s ranks on 2 rails, one process: every rank sends 1 KiB to %d peers (rank + 1, + 2, + 4, ...)"
          % (format(n, ","), int(mem["messages"]) // n))
    print("   (bfo sim's engines: their pools as bfo sim sizes them, grown as pml/bfo's; transports' buffers not included)")
    label = "bfo sim, %s ranks: engine memory per rank" % format(n, ",")
    if not passed:
        print("   %-44s FAILED: %s" % (label, summary or "no summary"))
        return
    mib = 1048576
    print("   %-44s %8.2f MiB block (bfo_engine_mem_size), %.2f MiB touched, %s B per peer, %.2f MiB grown" % (
        label, int(mem["block"]) / mib, int(mem["touched"]) / mib, mem["per_peer"], int(mem["grown"]) / mib))
    print("   %-44s %8s messages, every one delivered; %s network operations; %s s (timers every %s us)" % (
        "", mem["messages"], mem["ops"], mem["seconds"], mem["progress_us"]))


def growth(a, b):
    """How much a figure grew from a (fewest ranks) to b (most): b / a; 1
    when both are 0 (flat), None when unknown, inf from 0 to more."""
    if a is None or b is None:
        return None
    if a == 0:
        return 1.0 if b == 0 else float("inf")
    return b / a


def growth_section(meta, medians):
    """Per place with two rank counts or more, a line per figure: how much
    it grew from the fewest ranks to the most under ob1 and under bfo (the
    ratio of the medians), and whether bfo's grew faster than ob1's (issue
    37: from 16 to 128 ranks no figure grows faster than ob1's)."""
    for where, key in (("host", "sizes"), ("hosts", "host_sizes")):
        sizes = sorted({int(x) for x in meta.get(key, "").split()})
        if len(sizes) < 2:
            continue
        lo, hi = sizes[0], sizes[-1]
        title = "one host" if where == "host" else "4 namespace hosts"
        print()
        print("== growth from %d to %d ranks, %s (median at %d / median at %d; "
              "faster: bfo's growth above ob1's)" % (lo, hi, title, hi, lo))
        print("   %-40s %10s %10s  %s" % ("figure", "ob1", "bfo", "bfo grows faster than ob1?"))
        for k, label, _sc, _fm in FIGURES:
            g = {c: growth(medians.get((where, lo, c, k)), medians.get((where, hi, c, k))) for c in ("ob1", "bfo")}
            cell = {c: "-" if g[c] is None else ("inf" if g[c] == float("inf") else "%.2fx" % g[c]) for c in g}
            if g["ob1"] is None or g["bfo"] is None:
                missing = [c for c in g if g[c] is None]
                verdict = "n/a (no figure of %s at %d or %d ranks)" % (" and ".join(missing), lo, hi)
            elif g["bfo"] > g["ob1"]:
                verdict = "YES (faster)"
            else:
                verdict = "no"
            print("   %-40s %10s %10s  %s" % (label, cell["ob1"], cell["bfo"], verdict))


def main():
    raw = sys.argv[1]
    meta = {}
    with open(os.path.join(raw, "meta.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    runs = []
    with open(os.path.join(raw, "manifest.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(head, line.rstrip("\n").split("\t")))
            row["result"] = parse_result(os.path.join(raw, row["file"])) if row["status"] == "ok" else None
            runs.append(row)
    rounds = int(meta.get("rounds", "0"))
    print("bench-scale  %s  host %s, %s cores, load %s, Open MPI %s, commit %s" % (
        meta.get("date"), meta.get("host"), meta.get("nproc"), meta.get("loadavg"), meta.get("ompi_version"),
        meta.get("commit")))
    print("%d interleaved round(s), %s s in all; idle windows %s s each; one host: %s" % (
        rounds, meta.get("seconds", "?"), meta.get("idle"),
        "each job in a network namespace of its own (lo only)" if meta.get("host_ns") == "1"
        else "the host's lo, shared with anything else running (packet counts include it)"))
    print("medians over the rounds; bfo/ob1 = median of the same-round ratios; FAILED = no run finished")
    verdicts = []
    medians = {}  # (where, ranks, config, key) -> the median, for the growth lines
    blocks = []
    for where, key in (("host", "sizes"), ("hosts", "host_sizes")):
        for n in meta.get(key, "").split():
            blocks.append((where, n))
    for where, n in blocks:
        per = {}
        for c in ("ob1", "bfo"):
            per[c] = {int(r["round"]): r for r in runs if r["where"] == where and r["ranks"] == n and r["config"] == c}
        title = "one host" if where == "host" else "4 namespace hosts (tests/hosts)"
        okc = {c: sum(1 for r in per[c].values() if r["result"]) for c in per}
        print()
        print("== %s, %s ranks (ob1 %d/%d ok, bfo %d/%d ok)" % (title, n, okc["ob1"], len(per["ob1"]), okc["bfo"],
                                                                len(per["bfo"])))
        for c in per:
            bad = ["r%d %s" % (k, r["status"]) for k, r in sorted(per[c].items()) if not r["result"]]
            if bad:
                print("   %s FAILED runs: %s" % (c, ", ".join(bad)))
        print("   %-40s %10s %10s %8s" % ("figure", "ob1", "bfo", "bfo/ob1"))
        for k, label, sc, fm in FIGURES:
            vals = {}
            for c in per:
                xs = [r["result"][k] * sc for r in per[c].values() if r["result"] and k in r["result"]
                      and r["result"][k] >= 0]
                vals[c] = statistics.median(xs) if xs else None
                medians[(where, int(n), c, k)] = vals[c]
            ratios = []
            for rd in per["ob1"]:
                a, b = per["ob1"][rd]["result"], per["bfo"].get(rd, {}).get("result")
                if a and b and k in a and k in b and a[k] > 0 and b[k] >= 0:
                    ratios.append(b[k] / a[k])
            ratio = statistics.median(ratios) if ratios else None
            cell = {c: ("FAILED" if okc[c] == 0 else fmt(fm, vals[c])) for c in per}
            print("   %-40s %10s %10s %8s" % (label, cell["ob1"], cell["bfo"], fmt("%.2f", ratio)))
            if where == "host" and n == str(TARGET_RANKS):
                if k in RATIO_TARGETS:
                    lim = RATIO_TARGETS[k]
                    verdicts.append((label, "bfo/ob1 <= %.1f" % lim, fmt("%.2f", ratio),
                                     "n/a" if ratio is None else ("met" if ratio <= lim else "MISSED")))
                if k in ABS_TARGETS:
                    lim = ABS_TARGETS[k]
                    v = vals["bfo"]
                    verdicts.append((label, "bfo <= %d" % lim, fmt("%.1f", v),
                                     "n/a" if v is None else ("met" if v <= lim else "MISSED")))
                if k == "sockets_init_mean":
                    a, b = vals["ob1"], vals["bfo"]
                    d = None if a is None or b is None else b - a
                    verdicts.append(("sockets after MPI_Init beyond ob1's", "<= %d (1 per rail)" % RAILS,
                                     fmt("%.1f", d), "n/a" if d is None else ("met" if d <= RAILS else "MISSED")))
    growth_section(meta, medians)
    sm = os.path.join(raw, "sim_mem.txt")
    if os.path.exists(sm):
        sim_section(sm)
    em = os.path.join(raw, "engine_mem.txt")
    if os.path.exists(em):
        print()
        print("== pml/bfo's engine block per rank (bfo_engine_mem_size, rails shm,127.0.0.2, pml/bfo's configuration:")
        print("   4,096 requests, 1,024 unexpected messages; computed, not run; transports' buffers not included)")
        with open(em) as f:
            for line in f:
                d = dict(kv.partition("=")[::2] for kv in line.split()[1:])
                if "bytes" in d:
                    print("   %5s ranks: %8.2f MiB per rank (%s B per peer)" % (
                        d["ranks"], int(d["bytes"]) / 1048576, d["per_peer"]))
                else:
                    print("   " + line.rstrip())
    if verdicts:
        print()
        print("== issue 37's targets at %d ranks, one host (informational)" % TARGET_RANKS)
        for label, target, v, verdict in verdicts:
            print("   %-40s %-20s %8s  %s" % (label, target, v, verdict))
    return 0


if __name__ == "__main__":
    sys.exit(main())
