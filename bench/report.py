#!/usr/bin/env python3
"""The benchmark's table and JSON from bench/run's samples. Usage: report.py SAMPLES.jsonl OUT.json
   report.py --simulation SIM.jsonl: the scale simulation's table (bench/run --simulate), medians per width and run"""
import json
import os
import platform
import statistics
import sys

LABEL = {
    "version": "gpuctl --version (start-up)",
    "bootstrap_fresh": "bootstrap, fresh hosts",
    "bootstrap_rerun": "bootstrap, no-op re-run",
    "verify": "verify (bootstrapped cluster)",
    "prep_fresh": "host preparation, fresh hosts",
    "prep_rerun": "host preparation, no-op re-run",
}
FIRST_COMMAND_LIMIT_S = 1.0  # issue 32: the first command on a host at most 1.0 s after the process starts, at 1+8
ANSIBLE_RATIO_LIMIT = 0.5    # issue 32: fresh host preparation and its no-op re-run each at most 0.5 x Ansible's
ORDER = ["version", "bootstrap_fresh", "bootstrap_rerun", "verify", "prep_fresh", "prep_rerun"]


def machine():
    cpus = os.cpu_count()
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // (1024 * 1024)
    except OSError:
        pass
    osname = platform.platform()
    try:
        with open("/etc/os-release") as f:
            osname = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l).get("PRETTY_NAME", osname).strip('"')
    except OSError:
        pass
    return {"cpus": cpus, "memory_gib": mem, "os": osname}


def simulation(path):
    """The scale simulation's table: per run kind and width, the median of each figure over its runs."""
    runs = [json.loads(l) for l in open(path) if l.strip()]
    groups = {}
    for r in runs:
        groups.setdefault((r["mode"], r["workers"], r["concurrency"]), []).append(r)
    med = lambda rs, k: statistics.median(r[k] for r in rs)
    print("%-13s %6s %4s %4s %7s %7s %6s %7s %8s %8s %7s %7s %5s %5s %5s %4s" % (
        "run", "hosts", "conc", "runs", "wall s", "ideal s", "w/i", "w/i(c)", "CPU s", "ms/host", "RSS MiB", "heap MiB",
        "thr", "sess", "busy", "exit"))
    print("-" * 118)
    for (mode, w, c), rs in sorted(groups.items(), key=lambda g: (g[0][0] != "rerun", g[0][1], g[0][2])):
        wall, ideal, idealc = med(rs, "wall_s"), med(rs, "ideal_s"), med(rs, "ideal_at_concurrency_s")
        bad = [r for r in rs if r["exit"] != 0 or r["unanswered"] or r["hosts_answered"] != w + 1]
        print("%-13s %6s %4d %4d %7.2f %7.2f %6.2f %7.2f %8.2f %8.1f %7d %7d %5d %5d %5d %4s" % (
            "no-op re-run" if mode == "rerun" else "verify", "1+%d" % w, c, len(rs), wall, ideal, wall / ideal if ideal else 0,
            wall / idealc if idealc else 0, med(rs, "cpu_s"), med(rs, "cpu_ms_per_host"), med(rs, "process_rss_kb") // 1024,
            med(rs, "peak_heap_mb"), med(rs, "peak_threads"), med(rs, "peak_sessions"), med(rs, "peak_busy_hosts"),
            "0" if not bad else "%d!" % len(bad)))
    print()
    print("wall: the engine's run (JVM start not counted); ideal: per round the slowest host's time in commands, rounds one")
    print("after another (latency model: 20 ms a command, 300 ms an nvidia-smi, 150 ms a kubectl, the SSH handshake once);")
    print("w/i(c): wall over the ideal with at most --concurrency hosts at once; CPU: gpuctl's process CPU during the run")
    print("less the simulation's own answering; RSS: the process's peak; thr: peak threads; sess: sessions open at once;")
    print("busy: hosts with a command running at once; exit: N! when N runs did not exit 0 with every host answered")
    print()
    print("Heavy tool runs, the most on one host (#32's limits: per GPU worker nvidia-smi <= 2, docker/crictl <= 1,")
    print("systemctl show <= 1; the master's kubectl <= 2):")
    print("%-13s %6s  %-44s %s" % ("run", "hosts", "master", "worker"))
    tools = [("nvidia_smi", "nvidia-smi"), ("kubectl", "kubectl"), ("docker", "docker/crictl"), ("systemctl_show", "systemctl show")]
    for (mode, w, c), rs in sorted(groups.items(), key=lambda g: (g[0][0] != "rerun", g[0][1], g[0][2])):
        r = rs[0]
        if "master_kubectl" not in r:
            continue
        print("%-13s %6s  %-44s %s" % ("no-op re-run" if mode == "rerun" else "verify", "1+%d" % w,
            ", ".join("%s %d" % (label, r["master_" + k]) for k, label in tools),
            ", ".join("%s %d" % (label, r["worker_max_" + k]) for k, label in tools)))


def main(samples_path, out_path):
    samples = []
    if os.path.exists(samples_path):
        with open(samples_path) as f:
            samples = [json.loads(l) for l in f if l.strip()]
    groups = {}
    for s in samples:
        groups.setdefault((s["metric"], s["tool"], int(s["workers"])), []).append(s)
    rows = []
    for (metric, tool, w), ss in sorted(groups.items(), key=lambda kv: (ORDER.index(kv[0][0]) if kv[0][0] in ORDER else 99, kv[0][2], kv[0][1])):
        ok = [s for s in ss if s["exit"] == 0]
        walls = [s["wall_s"] for s in ok]
        logs = [s["logs"] for s in ok if s.get("logs")]
        row = {"metric": metric, "tool": tool, "workers": w, "runs": len(ss), "failed": len(ss) - len(ok)}
        if walls:
            row.update(median_s=round(statistics.median(walls), 2), min_s=round(min(walls), 2), max_s=round(max(walls), 2),
                       max_rss_mib=round(statistics.median(s["max_rss_kb"] for s in ok) / 1024))
        if logs:
            row.update(round_trips_per_host=statistics.median(l["round_trips_max"] for l in logs),
                       steps_per_host=statistics.median(l["steps_max"] for l in logs),
                       round_trips_per_step_max=max(l["round_trips_per_step_max"] for l in logs),
                       remote_critical_s=round(statistics.median(l["remote_critical_s"] for l in logs), 2))
            firsts = [l["first_command_s"] for l in logs if l.get("first_command_s") is not None]
            if firsts:
                row["first_command_s"] = round(statistics.median(firsts), 2)
            overheads = [s["wall_s"] - s["logs"]["remote_critical_s"] for s in ok if s.get("logs")]
            row["overhead_s"] = round(statistics.median(overheads), 2)
            row["overhead_pct"] = round(100 * statistics.median(o / s["wall_s"] for o, s in zip(overheads, [s for s in ok if s.get("logs")])))
        rows.append(row)

    def med(metric, tool, w):
        r = next((r for r in rows if r["metric"] == metric and r["tool"] == tool and r["workers"] == w and "median_s" in r), None)
        return r["median_s"] if r else None

    def ratio(a, b):
        return round(a / b, 2) if a is not None and b else None

    widths = sorted({r["workers"] for r in rows if r["workers"] > 0})
    lo, hi = (widths[0], widths[-1]) if widths else (None, None)
    ratios = {}
    if lo is not None and hi != lo:
        for metric, tool in [("bootstrap_fresh", "gpuctl"), ("prep_fresh", "gpuctl"), ("prep_fresh", "ansible"),
                             ("bootstrap_rerun", "gpuctl"), ("verify", "gpuctl"), ("prep_rerun", "ansible"), ("prep_rerun", "gpuctl")]:
            ratios[f"{metric} {tool} W={hi} / W={lo}"] = ratio(med(metric, tool, hi), med(metric, tool, lo))
    for w in widths:
        for metric in ("prep_fresh", "prep_rerun"):
            ratios[f"{metric} gpuctl / ansible, W={w}"] = ratio(med(metric, "gpuctl", w), med(metric, "ansible", w))

    targets = []

    def target(name, value, limit, unit=""):
        if value is not None:
            targets.append({"target": name, "value": value, "limit": limit, "met": value <= limit, "unit": unit})

    w8 = 8 if 8 in widths else hi
    if w8 is not None:
        g = ratios.get(f"prep_fresh gpuctl W={hi} / W={lo}")
        a = ratios.get(f"prep_fresh ansible W={hi} / W={lo}")
        if g is not None and a is not None:
            targets.append({"target": f"(a) W={hi}/W={lo} scaling, gpuctl below ansible", "value": g, "limit": a, "met": g < a, "unit": ""})
        # the earlier round's absolute limits, (b) no-op re-run 4 s, (c) verify 3.5 s, (d) overhead 10 %, are gone:
        # issue 32 replaced them with the ratios beside Ansible (a) and the heavy calls per host; the table keeps the figures
        for metric in ("bootstrap_rerun", "verify", "bootstrap_fresh"):
            r = next((r for r in rows if r["metric"] == metric and r["workers"] == w8 and "first_command_s" in r), None)
            if r:
                target(f"(g) first command on a host after start, {LABEL[metric]}, 1+{w8}", r["first_command_s"], FIRST_COMMAND_LIMIT_S, "s")
        r = next((r for r in rows if r["metric"] == "bootstrap_rerun" and r["workers"] == w8 and "round_trips_per_step_max" in r), None)
        if r:
            target(f"(f) round trips per step per host, no-op re-run, 1+{w8}", r["round_trips_per_step_max"], 1)
    # issue 32, side by side with Ansible: gpuctl's median over Ansible's median, same hosts, same work
    for w in widths:
        for metric, what in (("prep_fresh", "fresh host preparation"), ("prep_rerun", "no-op re-run of host preparation")):
            g = next((r for r in rows if r["metric"] == metric and r["tool"] == "gpuctl" and r["workers"] == w and "median_s" in r), None)
            a = next((r for r in rows if r["metric"] == metric and r["tool"] == "ansible" and r["workers"] == w and "median_s" in r), None)
            if g and a:
                runs = min(g["runs"] - g["failed"], a["runs"] - a["failed"])
                target(f"(a) {what}, 1+{w}: gpuctl / ansible, medians of {runs}", ratio(g["median_s"], a["median_s"]), ANSIBLE_RATIO_LIMIT)
    if 24 in widths and 8 in widths:
        for metric in ("bootstrap_rerun", "verify"):
            target(f"(h) W=24 / W=8, {LABEL[metric]}", ratio(med(metric, "gpuctl", 24), med(metric, "gpuctl", 8)), 2.0)
        for metric in ("bootstrap_fresh", "bootstrap_rerun", "verify"):
            r = next((r for r in rows if r["metric"] == metric and r["workers"] == 24 and "max_rss_mib" in r), None)
            if r:
                target(f"(i) peak RSS, {LABEL[metric]}, 1+24", r["max_rss_mib"], 300, " MiB")
    target("(e) gpuctl --version", med("version", "gpuctl", 0), 0.5, "s")

    # the table
    head = f"{'what':34} {'hosts':>5} {'tool':8} {'median':>7} {'min':>7} {'max':>7} {'runs':>4} {'RSS MiB':>7} {'RT/host':>7} {'RT/step':>7} {'remote':>7} {'overhead':>9} {'1st cmd':>7}"
    lines = [head, "-" * len(head)]
    for r in rows:
        hosts = "-" if r["workers"] == 0 else f"1+{r['workers']}"
        f = lambda k, fmt="{:.2f}": fmt.format(r[k]) if k in r else "-"
        over = f"{r['overhead_s']:.2f} {r['overhead_pct']:>2}%" if "overhead_s" in r else "-"
        runs = f"{r['runs']}" + (f"!{r['failed']}" if r["failed"] else "")
        lines.append(f"{LABEL.get(r['metric'], r['metric']):34} {hosts:>5} {r['tool']:8} {f('median_s'):>7} {f('min_s'):>7} {f('max_s'):>7} {runs:>4} "
                     f"{f('max_rss_mib', '{}'):>7} {f('round_trips_per_host', '{:g}'):>7} {f('round_trips_per_step_max', '{:g}'):>7} {f('remote_critical_s'):>7} {over:>9} {f('first_command_s'):>7}")
    lines.append("")
    lines.append("wall times in s (whole process); RT/host: SSH commands per host (the busiest); RT/step: most on one step of one host;")
    lines.append("remote: s the hosts spent in commands on the critical path (per phase the slowest host); overhead: wall - remote;")
    lines.append("1st cmd: s from the process's start until its first command began on a host (JVM, inventory, SSH connect)")
    if ratios:
        lines.append("")
        for k, v in ratios.items():
            if v is not None:
                lines.append(f"{k:52} {v:>6.2f}")
    if targets:
        lines.append("")
        for t in targets:
            lines.append(f"{'met   ' if t['met'] else 'MISSED'} {t['target']:70} {t['value']:>7g}{t['unit']} (limit {t['limit']:g}{t['unit']})")
    m = machine()
    lines.append("")
    lines.append(f"machine: {m['cpus']} cores, {m['memory_gib']} GiB, {m['os']}")
    print("\n".join(lines))
    with open(out_path, "w") as f:
        json.dump({"schema": "gpuctl.bench/v1", "machine": m, "rows": rows, "ratios": ratios, "targets": targets,
                   "samples": samples}, f, indent=1)
        f.write("\n")


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--simulation":
    simulation(sys.argv[2])
    sys.exit(0)
if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
