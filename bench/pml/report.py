#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/pml/report.py RAW_DIR OUT_DIR - the table, JSON and gnuplot script
of one bench/pml/run.sh run (bench/pml/README.md describes them).

Reads RAW_DIR/meta.txt, RAW_DIR/manifest.tsv and the runs' outputs
(r<round>-<config>.out from pml_bench, r<round>-<config>-np.np from NetPIPE).
Writes OUT_DIR/table.txt (also printed), OUT_DIR/pml-bench.json,
OUT_DIR/plot/<config>.dat and OUT_DIR/plot.gp (gnuplot -> pml-bench.png).

Medians are per (configuration, size) over the rounds.  A ratio X/Y is the
median over the rounds of X's value in that round divided by Y's value in
the same round (only rounds where both ran), so that a round disturbed by
another process on the machine moves one sample, not both sides.
"""
import json
import os
import re
import statistics
import sys

TCP_GROUP = ["ob1-tcp", "ucx-tcp", "ucx-lo", "bfo-1rail", "bfo-2rails"]
HOST_GROUP = ["ob1-vader", "bfo-shm"]
BFO_TCP = ["bfo-1rail", "bfo-2rails"]
SHORT = {"ob1-tcp": "ob1", "ucx-tcp": "ucx", "ucx-lo": "ucx-lo", "bfo-1rail": "1r", "bfo-2rails": "2r",
         "ob1-vader": "vader", "bfo-shm": "shm"}

# The targets (informational: printed with a verdict, never enforced).
LAT_8B_VS_OB1 = 0.6      # 8 B latency <= 0.6x ob1-tcp
LAT_8B_VS_UCX = 1.0      # 8 B latency <= 1.0x ucx-tcp
LAT_VS_OB1 = 1.0         # every size: latency <= 1.0x ob1-tcp
BW_1M_VS_BEST = 1.0      # 1 MiB bandwidth >= 1.0x max(ob1-tcp, ucx-tcp)
BW_2R_VS_1R = 1.0        # bandwidth 2 rails >= 1 rail, at sizes >= 1 MiB
BW_2R_FROM = 1 << 20
SHM_LAT_VS_VADER = 1.5   # bfo-shm latency <= 1.5x ob1-vader, sizes >= 4 KiB
SHM_FROM = 4096
NP_BW_SIZE = 1 << 20     # NetPIPE bandwidth reported at the size nearest this


def size_label(n):
    for unit, suf in ((1 << 20, "M"), (1 << 10, "K")):
        if n >= unit:
            q, r = divmod(n, unit)
            if r == 0:
                return f"{q}{suf}"
            if r == 1:
                return f"{q}{suf}+1"
            if r == unit - 1:
                return f"{q + 1}{suf}-1"
    return str(n)


def read_meta(raw):
    meta = {}
    with open(os.path.join(raw, "meta.txt")) as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                meta[k] = v
    return meta


def read_manifest(raw):
    rows = []
    with open(os.path.join(raw, "manifest.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            vals = line.rstrip("\n").split("\t")
            if len(vals) == len(head):
                rows.append(dict(zip(head, vals)))
    return rows


LINE_RE = re.compile(r"^pml_bench size=")


def parse_bench(path):
    out = {}
    with open(path) as f:
        for line in f:
            if not LINE_RE.match(line):
                continue
            kv = dict(tok.split("=", 1) for tok in line.split()[1:] if "=" in tok)
            size = int(kv["size"])
            out[size] = {"latency_us": float(kv["latency_us"]), "bandwidth_MBps": float(kv["bandwidth_MBps"]),
                         "lat_min_us": float(kv["lat_min_us"]), "lat_mean_us": float(kv["lat_mean_us"]),
                         "bw_total_MBps": float(kv["bw_total_MBps"]) if "bw_total_MBps" in kv else None,
                         "lat_iters": int(kv["lat_iters"]), "bw_msgs": int(kv["bw_msgs"])}
    return out


def parse_netpipe(path):
    """NetPIPE's -o file: bytes, Mbps (2^20 bit/s), one-way time in seconds."""
    rows = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3:
                try:
                    rows.append((int(p[0]), float(p[1]), float(p[2])))
                except ValueError:
                    pass
    if not rows:
        return None
    small = min(rows, key=lambda r: (abs(r[0] - 8), r[0]))
    big = min(rows, key=lambda r: (abs(r[0] - NP_BW_SIZE), -r[0]))
    return {"lat_size": small[0], "latency_us": small[2] * 1e6,
            "bw_size": big[0], "bandwidth_MBps": big[0] / big[2] / 1e6 if big[2] > 0 else None,
            "points": [{"size": b, "Mbps": m, "time_us": t * 1e6} for b, m, t in rows]}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Data:
    def __init__(self, raw, meta, manifest):
        self.rounds = int(meta.get("rounds", "0"))
        self.configs = meta.get("configs", "").split()
        self.run_configs = meta.get("run_configs", "").split()
        self.skipped = meta.get("skipped", "").split()
        self.bench = {}   # config -> round -> size -> dict
        self.np = {}      # config -> round -> dict
        self.sizes = []
        for row in manifest:
            if row["status"] != "ok":
                continue
            c, r = row["config"], int(row["round"])
            path = os.path.join(raw, row["file"])
            if row["kind"] == "pml_bench":
                res = parse_bench(path + ".out")
                self.bench.setdefault(c, {})[r] = res
                for s in res:
                    if s not in self.sizes:
                        self.sizes.append(s)
            elif row["kind"] == "netpipe":
                res = parse_netpipe(path + ".np")
                if res:
                    self.np.setdefault(c, {})[r] = res
        self.sizes.sort()

    def series(self, c, size, key):
        """round -> value"""
        return {r: v[size][key] for r, v in self.bench.get(c, {}).items() if size in v}

    def median(self, c, size, key):
        return med(list(self.series(c, size, key).values()))

    def ratio(self, a, b, size, key, b2=None):
        """median over rounds of a_r / b_r; with b2, b_r = max(b_r, b2_r)
        (rounds where either baseline ran)."""
        sa = self.series(a, size, key)
        sb = self.series(b, size, key)
        if b2 is not None:
            s2 = self.series(b2, size, key)
            sb = {r: max(v for v in (sb.get(r), s2.get(r)) if v is not None) for r in set(sb) | set(s2)}
        rs = [sa[r] / sb[r] for r in sa if r in sb and sb[r] > 0]
        return med(rs), len(rs)

    def np_median(self, c, key):
        return med([v.get(key) for v in self.np.get(c, {}).values()])

    def np_ratio(self, a, b, key):
        sa, sb = self.np.get(a, {}), self.np.get(b, {})
        rs = [sa[r][key] / sb[r][key] for r in sa if r in sb and sa[r].get(key) and sb[r].get(key)]
        return med(rs)


def fnum(v, width, prec=None):
    if v is None:
        return "-".rjust(width)
    if prec is None:
        prec = 2 if v < 100 else 1 if v < 10000 else 0
    return f"{v:{width}.{prec}f}"


def fratio(v, width=7):
    return "-".rjust(width) if v is None else f"{v:{width}.2f}"


def main():
    raw, out = sys.argv[1], sys.argv[2]
    meta = read_meta(raw)
    manifest = read_manifest(raw)
    d = Data(raw, meta, manifest)
    standin = meta.get("standin") == "1"
    lines = []
    P = lines.append
    targets = []   # dicts for the JSON and the summary

    def have(c):
        return c in d.bench and d.bench[c]

    def verdict(checks):
        """checks: list of (label, value, op, limit); value None -> not judged"""
        judged = [(lab, v, op, lim) for lab, v, op, lim in checks if v is not None]
        if not judged:
            return "n/a"
        missed = [lab for lab, v, op, lim in judged if not (v <= lim if op == "<=" else v >= lim)]
        return "met" if not missed else "MISSED " + ",".join(missed)

    P(f"bench-pml: {meta.get('date', '')} {meta.get('host', '')} ({meta.get('nproc', '?')} cores), "
      f"Open MPI {meta.get('ompi_version', '?')}, UCX {meta.get('ucx_version', '?')}, "
      f"{d.rounds} interleaved rounds, {meta.get('seconds', '?')} s")
    P("medians over the rounds; ratio X/Y = median over the rounds of (X / Y measured in the same round); "
      "latency = half round trip (us), median of the iterations; bandwidth = streaming MB/s (1e6 B/s), "
      "a window's bytes / median window time")
    if standin:
        P("*** PML_BENCH_STANDIN=1: bfo-* rows are ob1 stand-ins (harness self-test): they say nothing about bfo ***")
    if d.skipped:
        P(f"skipped: {' '.join(d.skipped)} (no mca_pml_bfo.so in {meta.get('bfo_pml_dir', '?')})")
    failed = meta.get("failed", "").split()
    if failed:
        P(f"FAILED (dropped after the failure): {' '.join(failed)}")
    counts = {c: len(d.bench.get(c, {})) for c in d.configs}
    P("rounds completed: " + ", ".join(f"{c} {counts[c]}" for c in d.configs))
    P("")

    tcp_cols = [c for c in TCP_GROUP if c in d.configs]
    host_cols = [c for c in HOST_GROUP if c in d.configs]
    bfo_tcp = [c for c in BFO_TCP if c in d.configs]

    # ---------------- latency, TCP group ----------------
    if tcp_cols:
        ratio_defs = []  # (header, a, b)
        if "ucx-tcp" in d.configs and "ob1-tcp" in d.configs:
            ratio_defs.append(("ucx/ob1", "ucx-tcp", "ob1-tcp"))
        if "ucx-lo" in d.configs and "ucx-tcp" in d.configs:
            ratio_defs.append(("lo/ucx", "ucx-lo", "ucx-tcp"))
        for b in bfo_tcp:
            for ref in ("ob1-tcp", "ucx-tcp"):
                if ref in d.configs:
                    ratio_defs.append((f"{SHORT[b]}/{SHORT[ref]}", b, ref))
        if len(bfo_tcp) == 2:
            ratio_defs.append(("2r/1r", "bfo-2rails", "bfo-1rail"))
        P("LATENCY over TCP loopback, us (lower is better)")
        hdr = f"{'size':>7} " + "".join(f"{c:>11}" for c in tcp_cols) + " |" + \
              "".join(f"{h:>8}" for h, _, _ in ratio_defs) + " | target                         verdict"
        P(hdr)
        for s in d.sizes:
            row = f"{size_label(s):>7} " + "".join(fnum(d.median(c, s, 'latency_us'), 11) for c in tcp_cols) + " |"
            rv = {}
            for h, a, b in ratio_defs:
                rv[h] = d.ratio(a, b, s, "latency_us")[0]
                row += fratio(rv[h], 8)
            checks = []
            if s == 8:
                tgt = f"bfo/ob1 <= {LAT_8B_VS_OB1}, bfo/ucx <= {LAT_8B_VS_UCX}"
                for b in bfo_tcp:
                    checks.append((f"{SHORT[b]}/ob1", rv.get(f"{SHORT[b]}/ob1"), "<=", LAT_8B_VS_OB1))
                    checks.append((f"{SHORT[b]}/ucx", rv.get(f"{SHORT[b]}/ucx"), "<=", LAT_8B_VS_UCX))
            else:
                tgt = f"bfo/ob1 <= {LAT_VS_OB1}"
                for b in bfo_tcp:
                    checks.append((f"{SHORT[b]}/ob1", rv.get(f"{SHORT[b]}/ob1"), "<=", LAT_VS_OB1))
            v = verdict(checks)
            row += f" | {tgt:<30} {v}"
            P(row)
        P("")

        # ---------------- bandwidth, TCP group ----------------
        bw_defs = []
        if "ucx-tcp" in d.configs and "ob1-tcp" in d.configs:
            bw_defs.append(("ucx/ob1", "ucx-tcp", "ob1-tcp", None))
        if "ucx-lo" in d.configs and "ucx-tcp" in d.configs:
            bw_defs.append(("lo/ucx", "ucx-lo", "ucx-tcp", None))
        if "ob1-tcp" in d.configs or "ucx-tcp" in d.configs:
            for b in bfo_tcp:
                bw_defs.append((f"{SHORT[b]}/best", b, "ob1-tcp", "ucx-tcp"))
        if len(bfo_tcp) == 2:
            bw_defs.append(("2r/1r", "bfo-2rails", "bfo-1rail", None))
        P("BANDWIDTH over TCP loopback, MB/s (higher is better; best = the better of ob1 and ucx in the same round)")
        P(f"{'size':>7} " + "".join(f"{c:>11}" for c in tcp_cols) + " |" +
          "".join(f"{h:>8}" for h, *_ in bw_defs) + " | target                         verdict")
        for s in d.sizes:
            row = f"{size_label(s):>7} " + "".join(fnum(d.median(c, s, 'bandwidth_MBps'), 11) for c in tcp_cols) + " |"
            rv = {}
            for h, a, b, b2 in bw_defs:
                rv[h] = d.ratio(a, b, s, "bandwidth_MBps", b2)[0]
                row += fratio(rv[h], 8)
            checks, tg = [], []
            if s == 1 << 20:
                tg.append(f"bfo/best >= {BW_1M_VS_BEST}")
                for b in bfo_tcp:
                    checks.append((f"{SHORT[b]}/best", rv.get(f"{SHORT[b]}/best"), ">=", BW_1M_VS_BEST))
            if s >= BW_2R_FROM:
                tg.append(f"2r/1r >= {BW_2R_VS_1R}")
                checks.append(("2r/1r", rv.get("2r/1r"), ">=", BW_2R_VS_1R))
            row += f" | {', '.join(tg):<30} {verdict(checks) if tg else ''}"
            P(row.rstrip())
        P("")

    # ---------------- one host ----------------
    if host_cols:
        both = "ob1-vader" in d.configs and "bfo-shm" in d.configs
        P("ONE HOST: ob1 over vader (shared memory) and bfo over its shm rail; latency us, bandwidth MB/s")
        P(f"{'size':>7} " + "".join(f"{c + ' lat':>15}" for c in host_cols) +
          (f"{'shm/vader':>10}" if both else "") + " |" +
          "".join(f"{c + ' bw':>14}" for c in host_cols) + (f"{'shm/vader':>10}" if both else "") +
          " | target                         verdict")
        for s in d.sizes:
            row = f"{size_label(s):>7} " + "".join(fnum(d.median(c, s, 'latency_us'), 15) for c in host_cols)
            lr = d.ratio("bfo-shm", "ob1-vader", s, "latency_us")[0] if both else None
            br = d.ratio("bfo-shm", "ob1-vader", s, "bandwidth_MBps")[0] if both else None
            if both:
                row += fratio(lr, 10)
            row += " |" + "".join(fnum(d.median(c, s, 'bandwidth_MBps'), 14) for c in host_cols)
            if both:
                row += fratio(br, 10)
            if s >= SHM_FROM:
                row += f" | {'lat shm/vader <= ' + str(SHM_LAT_VS_VADER):<30} " + \
                       verdict([("shm/vader", lr, "<=", SHM_LAT_VS_VADER)])
            P(row.rstrip())
        P("(the shm/vader bandwidth ratio is shown, not judged)")
        P("")

    # ---------------- NetPIPE ----------------
    if d.np:
        P("NETPIPE (NPopenmpi " + meta.get("np_args", "") + "): one-way ping-pong time at "
          "the smallest size, ping-pong MB/s near 1 MiB; medians over the rounds; ratios against ob1 of the same group")
        P(f"{'config':>11} {'lat_us':>9} {'@bytes':>7} {'MB/s':>9} {'@bytes':>8} {'lat/ref':>8} {'bw/ref':>8}  ref")
        for c in d.configs:
            if c not in d.np:
                continue
            ref = "ob1-vader" if c in HOST_GROUP else "ob1-tcp"
            anyr = next(iter(d.np[c].values()))
            lr = d.np_ratio(c, ref, "latency_us") if c != ref else None
            br = d.np_ratio(c, ref, "bandwidth_MBps") if c != ref else None
            P(f"{c:>11} {fnum(d.np_median(c, 'latency_us'), 9)} {anyr['lat_size']:>7} "
              f"{fnum(d.np_median(c, 'bandwidth_MBps'), 9)} {anyr['bw_size']:>8} {fratio(lr, 8)} {fratio(br, 8)}  "
              f"{ref if c != ref else ''}")
        P("")

    # ---------------- targets summary ----------------
    def add_target(name, config, value, op, limit, detail=""):
        if value is None:
            met = None
        else:
            met = value <= limit if op == "<=" else value >= limit
        targets.append({"target": name, "config": config, "value": value, "op": op, "limit": limit,
                        "met": met, "detail": detail})

    def add_sweep(name, config, ref, key, op, limit, from_size=0):
        """One target over every size from from_size: config/ref of key in the
        same round; the worst ratio is judged, the sizes that miss listed."""
        worst, worst_s, missed = None, None, []
        for s in d.sizes:
            if s < from_size:
                continue
            rv = d.ratio(config, ref, s, key)[0]
            if rv is None:
                continue
            if worst is None or (rv > worst if op == "<=" else rv < worst):
                worst, worst_s = rv, s
            if rv > limit if op == "<=" else rv < limit:
                missed.append(size_label(s))
        add_target(name, config, worst, op, limit,
                   (f"worst at {size_label(worst_s)}" if worst_s is not None else "") +
                   (f"; missed at {','.join(missed)}" if missed else ""))

    for b in BFO_TCP:
        if b not in d.configs:
            continue
        if 8 in d.sizes:
            add_target("8 B latency vs ob1-tcp", b, d.ratio(b, "ob1-tcp", 8, "latency_us")[0], "<=", LAT_8B_VS_OB1)
            add_target("8 B latency vs ucx-tcp", b, d.ratio(b, "ucx-tcp", 8, "latency_us")[0], "<=", LAT_8B_VS_UCX)
        add_sweep("latency vs ob1-tcp, every size (worst shown)", b, "ob1-tcp", "latency_us", "<=", LAT_VS_OB1)
        if (1 << 20) in d.sizes:
            add_target("1 MiB bandwidth vs better of ob1-tcp, ucx-tcp", b,
                       d.ratio(b, "ob1-tcp", 1 << 20, "bandwidth_MBps", "ucx-tcp")[0], ">=", BW_1M_VS_BEST)
    if "bfo-1rail" in d.configs and "bfo-2rails" in d.configs:
        add_sweep(f"bandwidth 2 rails vs 1 rail, sizes >= {size_label(BW_2R_FROM)} (worst shown)", "bfo-2rails",
                  "bfo-1rail", "bandwidth_MBps", ">=", BW_2R_VS_1R, BW_2R_FROM)
    if "bfo-shm" in d.configs and "ob1-vader" in d.configs:
        add_sweep(f"shm latency vs ob1-vader, sizes >= {size_label(SHM_FROM)} (worst shown)", "bfo-shm",
                  "ob1-vader", "latency_us", "<=", SHM_LAT_VS_VADER, SHM_FROM)

    P("TARGETS (informational: a miss does not fail the run)")
    if not targets:
        P("  none judged: no bfo configuration was requested")
    for t in targets:
        mark = "n/a   " if t["met"] is None else "met   " if t["met"] else "MISSED"
        why = ""
        if t["met"] is None:
            why = " (skipped)" if t["config"] in d.skipped else " (no data)"
        P(f"  [{mark}] {t['config']:<10} {t['target']}: {fratio(t['value'], 0).strip()} "
          f"(target {t['op']} {t['limit']}){why}{'; ' + t['detail'] if t['detail'] else ''}")

    table = "\n".join(lines) + "\n"
    sys.stdout.write(table)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(table)

    # ---------------- JSON ----------------
    medians = {}
    ratios = {}
    for c in d.configs:
        if c not in d.bench:
            continue
        medians[c] = {}
        for s in d.sizes:
            lat = d.series(c, s, "latency_us")
            if not lat:
                continue
            medians[c][str(s)] = {
                "latency_us": d.median(c, s, "latency_us"),
                "lat_min_us": d.median(c, s, "lat_min_us"),
                "bandwidth_MBps": d.median(c, s, "bandwidth_MBps"),
                "bw_total_MBps": d.median(c, s, "bw_total_MBps"),
                "rounds": len(lat)}
    pairs = [("ucx-tcp", "ob1-tcp", None), ("ucx-lo", "ob1-tcp", None), ("ucx-lo", "ucx-tcp", None)]
    for b in BFO_TCP:
        pairs += [(b, "ob1-tcp", None), (b, "ucx-tcp", None), (b, "ob1-tcp", "ucx-tcp")]
    pairs += [("bfo-2rails", "bfo-1rail", None), ("bfo-shm", "ob1-vader", None)]
    for a, b, b2 in pairs:
        if a not in d.bench or (b not in d.bench and (b2 is None or b2 not in d.bench)):
            continue
        key = f"{a}/{b}" + (f"|{b2}" if b2 else "")
        ratios[key] = {}
        for s in d.sizes:
            lr, ln = d.ratio(a, b, s, "latency_us", b2)
            br, bn = d.ratio(a, b, s, "bandwidth_MBps", b2)
            ma, mb = d.median(a, s, "latency_us"), d.median(b, s, "latency_us")
            ratios[key][str(s)] = {"latency": lr, "bandwidth": br, "rounds": ln,
                                   "latency_ratio_of_medians": (ma / mb) if ma and mb else None}
    runs = []
    for row in manifest:
        e = {"round": int(row["round"]), "position": int(row["position"]), "config": row["config"],
             "kind": row["kind"], "status": row["status"], "exit": int(row["rc"]), "seconds": float(row["seconds"])}
        if row["status"] == "ok":
            path = os.path.join(raw, row["file"])
            if row["kind"] == "pml_bench":
                e["results"] = [dict(size=s, **v) for s, v in sorted(parse_bench(path + ".out").items())]
            else:
                e["netpipe"] = parse_netpipe(path + ".np")
        runs.append(e)
    netpipe = {c: {"latency_us": d.np_median(c, "latency_us"), "bandwidth_MBps": d.np_median(c, "bandwidth_MBps"),
                   "rounds": len(d.np[c])} for c in d.np}
    doc = {"meta": meta, "sizes": d.sizes, "configs": d.configs, "skipped": d.skipped, "failed": failed,
           "standin": standin,
           "ratio_definition": "median over rounds of (a_round / b_round); 'a/b|c': b_round = max(b_round, c_round)",
           "medians": medians, "ratios": ratios, "netpipe": netpipe, "targets": targets, "runs": runs}
    with open(os.path.join(out, "pml-bench.json"), "w") as f:
        json.dump(doc, f, indent=1)

    # ---------------- plot ----------------
    pdir = os.path.join(out, "plot")
    os.makedirs(pdir, exist_ok=True)
    plotted = []
    for c in d.configs:
        if c not in medians or not medians[c]:
            continue
        with open(os.path.join(pdir, c + ".dat"), "w") as f:
            f.write("# size latency_us bandwidth_MBps (medians over the rounds)\n")
            for s in d.sizes:
                m = medians[c].get(str(s))
                if m:
                    f.write(f"{s} {m['latency_us']} {m['bandwidth_MBps']}\n")
        plotted.append(c)
    gp = os.path.join(out, "plot.gp")
    if os.path.exists(gp):
        os.remove(gp)
    if plotted:
        title = f"pml_bench, medians of {d.rounds} interleaved rounds" + \
                (" (bfo-* are ob1 STAND-INS)" if standin else "")

        def plots(col):
            return ", \\\n     ".join(f"'{pdir}/{c}.dat' using 1:{col} with linespoints title '{c}'" for c in plotted)
        with open(gp, "w") as f:
            f.write(f"""set terminal pngcairo size 1400,560 noenhanced
set output '{out}/pml-bench.png'
set multiplot layout 1,2 title '{title}'
set logscale x 2
set format x '%.0b%B'
set xlabel 'message size (bytes)'
set grid
set key top left
set logscale y 10
set ylabel 'latency, half round trip (us)'
set title 'latency (lower is better)'
plot {plots(2)}
set logscale y 10
set ylabel 'bandwidth (MB/s, 1e6 B/s)'
set title 'streaming bandwidth (higher is better)'
plot {plots(3)}
unset multiplot
""")


if __name__ == "__main__":
    main()
