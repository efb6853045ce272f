"""`crictl ps` for the test bed: the control plane's static pods as the kubelet runs them.

A static pod's container runs while the kubelet runs and its manifest is in /etc/kubernetes/manifests; the API
server's while its unit (gpuctl-emu-apiserver.service, which the kubelet starts and stops with the manifest) is
active, so that it is still seen running in the seconds before the kubelet notices its manifest left. A container
restarted from a returned manifest has a new ID, as a real one does.
"""
import hashlib
import os
import re
import sys
import time

import emu

MANIFESTS = "/etc/kubernetes/manifests"
APISERVER_UNIT = "gpuctl-emu-apiserver.service"


def containers():
    """[(id, name, state, created)] of the static pods' containers."""
    kubelet = emu.unit_active("kubelet.service")
    out = []
    d = emu.R(MANIFESTS)
    names = sorted(f[:-5] for f in os.listdir(d) if f.endswith(".yaml")) if os.path.isdir(d) else []
    if "kube-apiserver" not in names and emu.unit_active(APISERVER_UNIT):
        names.append("kube-apiserver")
    for name in names:
        path = d + "/" + name + ".yaml"
        if name == "kube-apiserver":
            running = emu.unit_active(APISERVER_UNIT)
        else:
            running = kubelet
        if not running:
            continue
        stamp = str(os.stat(path).st_ctime_ns) if os.path.exists(path) else "leaving"  # a manifest moved back: a new container
        cid = hashlib.sha256((name + stamp).encode()).hexdigest()[:13]
        out.append((cid, name, "Running", os.stat(path).st_mtime if os.path.exists(path) else time.time()))
    return out


def ps(args):
    """crictl ps [-a] [-q] [--name REGEX] [--state STATE]"""
    name, state, quiet, i = None, None, False, 0
    while i < len(args):
        a = args[i]
        if a in ("-q", "--quiet"):
            quiet = True
        elif a in ("-a", "--all"):
            pass
        elif a == "--name":
            name = args[i + 1]; i += 1
        elif a.startswith("--name="):
            name = a.split("=", 1)[1]
        elif a in ("--state", "-s"):
            state = args[i + 1]; i += 1
        elif a.startswith("--state="):
            state = a.split("=", 1)[1]
        else:
            sys.stderr.write('FATA[0000] flag provided but not defined: %s\n' % a)
            return 1
        i += 1
    rows = [c for c in containers() if (name is None or re.search(name, c[1])) and (state is None or state.lower() == "running")]
    if quiet:
        for c in rows:
            print(c[0])
        return 0
    print("%-13s   %-13s   %-20s   %-8s   %-23s   %-7s   %-13s   %s" % ("CONTAINER", "IMAGE", "CREATED", "STATE", "NAME", "ATTEMPT", "POD ID", "POD"))
    for cid, n, st, created in rows:
        ago = int(time.time() - created)
        print("%-13s   %-13s   %-20s   %-8s   %-23s   %-7s   %-13s   %s" % (cid, cid[::-1], "%d seconds ago" % ago, st, n, "0", cid[1:], n + "-" + emu.hostname()))
    return 0
