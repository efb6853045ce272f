#!/usr/bin/env python3
"""Statistics of one gpuctl run from its per-host logs (.gpuctl/logs/<run>/<host>.log): SSH commands (round
trips) per host and per step, and the time the hosts spent in remote commands on the critical path (per phase,
the slowest host; phases run one after the other; in a verify run, preflight then each host's later phases side by
side). With START (the
process's start, epoch seconds), also the time until the first command began. Prints JSON.
Usage: logstats.py LOGDIR [START]"""
import json
import os
import re
import sys
from datetime import datetime, timezone

# step -> phase, as in src/main/java/dev/gpuctl/steps/Steps.java; phases end with a barrier over all hosts
PHASE = {"preflight": 0, "time": 1, "swap": 1, "kernel": 1, "runtime": 1, "packages": 1, "init": 2, "cni": 2,
         "join": 3, "gpu": 4, "nfs-server": 5, "nfs-clients": 6}
ENTRY = re.compile(r"^(\d{4}-\d\d-\d\dT[0-9:.]+Z) (.*)$")
STEP = re.compile(r"^-- step (\S+): ")
SINGLE = re.compile(r"^  exit -?\d+ in (\d+) ms$")
BATCH = re.compile(r"^batch of (\d+) probes(?: \(\d+ distinct commands\))?: one command, exit -?\d+ in (\d+) ms")


def ts(s):
    return datetime.fromisoformat(s[:26].rstrip("Z")).replace(tzinfo=timezone.utc).timestamp()


def host_stats(path):
    entries = []  # (timestamp, first line, following lines)
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = ENTRY.match(line)
            if m:
                entries.append([m.group(1), m.group(2), []])
            elif entries:
                entries[-1][2].append(line)
    step = "preflight"
    st = {"round_trips": 0, "batches": 0, "probes_batched": 0, "singles": 0, "transfers": 0, "steps": [],
          "step_round_trips": {}, "step_ms": {}, "phase_ms": {}, "first": None, "last": None, "first_start": None}
    for t, first, rest in entries:
        # a part of a log (commands asked alongside others) is written when it ends: entries are not in time order
        st["first"] = min(st["first"] or ts(t), ts(t))
        st["last"] = max(st["last"] or ts(t), ts(t))
        m = STEP.match(first)
        if m:
            step = m.group(1)
            if step not in st["steps"]:
                st["steps"].append(step)
            continue
        ms = None
        if first.startswith("$ "):
            m = next((SINGLE.match(l) for l in rest if SINGLE.match(l)), None)
            if m:
                ms = int(m.group(1))
                st["singles"] += 1
        else:
            m = BATCH.match(first)
            if m:
                ms = int(m.group(2))
                st["batches"] += 1
                st["probes_batched"] += int(m.group(1))
            elif first.startswith(("write ", "edit ", "fetched ")):
                st["transfers"] += 1
        if ms is not None:
            if st["first_start"] is None:
                st["first_start"] = ts(t) - ms / 1000
            st["round_trips"] += 1
            st["step_round_trips"][step] = st["step_round_trips"].get(step, 0) + 1
            st["step_ms"][step] = st["step_ms"].get(step, 0) + ms
            ph = str(PHASE.get(step, 9))
            st["phase_ms"][ph] = st["phase_ms"].get(ph, 0) + ms
    return st


def main(logdir, start=None):
    hosts = {}
    for name in sorted(os.listdir(logdir)):
        if name.endswith(".log"):
            hosts[name[:-4]] = host_stats(os.path.join(logdir, name))
    phases = sorted({p for h in hosts.values() for p in h["phase_ms"]})
    if os.path.basename(os.path.normpath(logdir)).endswith("-verify"):
        # verify: preflight on every host, then on each host its later phases' batches side by side
        critical_ms = max((h["phase_ms"].get("0", 0) for h in hosts.values()), default=0) + max(
            (max((ms for p, ms in h["phase_ms"].items() if p != "0"), default=0) for h in hosts.values()), default=0)
    else:
        critical_ms = sum(max(h["phase_ms"].get(p, 0) for h in hosts.values()) for p in phases)
    per_step = [h["step_round_trips"].get(s, 0) for h in hosts.values() for s in h["steps"]]
    steps_ms = {}
    for h in hosts.values():
        for s, ms in h["step_ms"].items():
            steps_ms[s] = max(steps_ms.get(s, 0), ms)
    firsts = [h["first"] for h in hosts.values() if h["first"]]
    lasts = [h["last"] for h in hosts.values() if h["last"]]
    print(json.dumps({
        "dir": os.path.abspath(logdir),
        "hosts": len(hosts),
        "round_trips": {n: h["round_trips"] for n, h in hosts.items()},
        "round_trips_max": max((h["round_trips"] for h in hosts.values()), default=0),
        "steps_max": max((len(h["steps"]) for h in hosts.values()), default=0),
        "round_trips_per_step_max": max(per_step, default=0),
        "batches": sum(h["batches"] for h in hosts.values()),
        "probes_batched": sum(h["probes_batched"] for h in hosts.values()),
        "transfers": sum(h["transfers"] for h in hosts.values()),
        "remote_critical_s": round(critical_ms / 1000, 3),
        "step_remote_s_max": {s: round(ms / 1000, 3) for s, ms in steps_ms.items()},
        "logged_span_s": round(max(lasts) - min(firsts), 3) if firsts else 0,
        "first_command_s": round(min(h["first_start"] for h in hosts.values() if h["first_start"]) - start, 3)
        if start is not None and any(h["first_start"] for h in hosts.values()) else None,
    }))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else None)
