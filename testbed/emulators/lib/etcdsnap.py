#!/usr/bin/python3
# etcd tools of the test bed: `etcdctl snapshot save`, `etcdctl member list|remove`, `etcdctl endpoint status|health`, `etcdutl snapshot restore|status`, and the
# container runtime's view of the control plane's static pods (`crictl ps`, `crictl exec`), over the emulated API
# server's store. The store ("etcd's data directory") is /var/lib/etcd/gpuctl-emu/state.json; a snapshot file is
# that store's bytes followed by their sha256 digest (32 bytes), as a real snapshot is a bbolt file with its sha256
# appended, which `snapshot restore` checks unless --skip-hash-check.
# Output follows etcd v3.6: zap JSON log lines on stderr, "Snapshot saved at PATH" on stdout, "Error: ..." and exit 1.
import hashlib, json, os, re, subprocess, sys, time
sys.path.insert(0, "/usr/lib/gpuctl-emu")
import emu

ETCD_VERSION = "3.6.6"
DATA_DIR = "/var/lib/etcd"
STORE = "gpuctl-emu/state.json"
# what the etcd static pod mounts from the host (kubeadm's etcd.yaml: etcd-data and etcd-certs hostPath volumes)
ETCD_POD_MOUNTS = ("/var/lib/etcd", "/etc/kubernetes/pki/etcd")
STATIC_PODS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")


def zlog(level, caller, msg, **kv):
    rec = {"level": level, "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000000Z", "caller": caller, "msg": msg}
    rec.update(kv)
    print(json.dumps(rec), file=sys.stderr)


def fail(msg):
    print("Error: " + msg, file=sys.stderr)
    return 1


def flags(argv, with_value):
    """--k=v, --k v (for the flags that take a value) and bare --k; the rest are positional."""
    f, pos, i = {}, [], 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            k, eq, v = a[2:].partition("=")
            if not eq and k in with_value:
                if i + 1 >= len(argv):
                    raise ValueError("flag needs an argument: --" + k)
                v = argv[i + 1]; i += 1
            f[k] = v if (eq or k in with_value) else "true"
        else:
            pos.append(a)
        i += 1
    return f, pos


# ---------------------------------------------------------------- etcdctl
def warn_retry(ep, error):
    zlog("warn", "clientv3/retry_interceptor.go:62", "retrying of unary invoker failed", target="etcd-endpoints://0x0/" + ep,
         attempt=0, error=error)


def dial(f, ep, visible):
    """etcdctl's connection to ENDPOINT with the flags' TLS files: None when it would connect, else its exit status
    (the error printed as etcdctl prints it)."""
    for k in ("cacert", "cert", "key"):
        v = f.get(k) or os.environ.get("ETCDCTL_" + k.upper())
        if v and not can_see(v, visible):
            return fail("open %s: no such file or directory" % v)
        f[k] = v
    m = re.match(r"^(?:(https?)://)?([^:/]+):(\d+)$", ep)
    if not m:
        return fail('invalid endpoint "%s"' % ep)
    scheme, host, port = m.groups()
    if not emu.port_in_use(int(port), "127.0.0.1" if host in ("localhost", "127.0.0.1") else host):
        warn_retry(ep, "rpc error: code = DeadlineExceeded desc = latest balancer error: last connection error: connection "
                       "error: desc = \"transport: Error while dialing: dial tcp %s:%s: connect: connection refused\"" % (host, port))
        return fail("context deadline exceeded")
    if scheme == "https" or f.get("cacert"):
        ca = emu.read("/etc/kubernetes/pki/etcd/ca.crt")
        if not (f.get("cacert") and f.get("cert") and f.get("key")) or ca is None:
            return fail("context deadline exceeded")
        if emu.read(f["cacert"]) != ca or not signed_by(f["cert"], f["cacert"]):
            warn_retry(ep, "rpc error: code = Unavailable desc = connection error: desc = \"transport: authentication handshake "
                           "failed: tls: failed to verify certificate: x509: certificate signed by unknown authority\"")
            return fail("context deadline exceeded")
    elif emu.read("/etc/kubernetes/pki/etcd/ca.crt") is not None:
        warn_retry(ep, "rpc error: code = Unavailable desc = error reading from server: EOF")
        return fail("context deadline exceeded")
    return None


def etcdctl(argv, visible=None):
    """`etcdctl [--endpoints E] [--cacert F --cert F --key F] [-w simple|table|json] COMMAND`: snapshot save, member
    list|remove, endpoint status|health [--cluster], version. visible: the host paths the caller can see (inside the
    etcd container: only its mounts), None for the host itself."""
    try:
        f, pos = flags(normalize(argv),
                       {"endpoints", "cacert", "cert", "key", "dial-timeout", "command-timeout", "write-out", "w"})
    except ValueError as e:
        return fail(str(e))
    if pos[:1] == ["version"] or f.get("version"):
        print("etcdctl version: %s\nAPI version: 3.6" % ETCD_VERSION)
        return 0
    out_fmt = f.get("write-out") or f.get("w") or "simple"
    if out_fmt not in ("simple", "table", "json", "fields", "protobuf"):
        return bad_args('unsupported output format "%s"' % out_fmt)
    cmd = pos[:2]
    if cmd not in (["snapshot", "save"], ["member", "list"], ["member", "remove"], ["endpoint", "status"], ["endpoint", "health"]):
        return fail("the test bed's etcdctl emulates snapshot save, member list|remove, endpoint status|health and version")
    if cmd == ["snapshot", "save"] and len(pos) != 3:
        return fail("snapshot save expects one argument")
    if cmd == ["member", "remove"]:
        if len(pos) != 3:
            return bad_args("member ID is not provided")
        try:
            mid = int(pos[2], 16)
        except ValueError:
            return bad_args("bad member ID arg (strconv.ParseUint: parsing %s: invalid syntax), expecting ID in Hex" % json.dumps(pos[2]))
    ep = (f.get("endpoints") or os.environ.get("ETCDCTL_ENDPOINTS") or "127.0.0.1:2379").split(",")[0]
    rc = dial(f, ep, visible)
    if rc is not None:
        return rc
    url = ep if ep.startswith("http") else "https://" + ep
    if cmd == ["snapshot", "save"]:
        return snapshot_save(pos[2], ep, visible)
    import etcd_member
    try:
        ms = sorted(etcd_member.client(url, timeout=5).get("/emu/etcd/members")["members"], key=lambda m: m["id"])
    except emu.ApiError as e:
        msg = (e.body or {}).get("message") if e.status else None
        if cmd[0] == "endpoint" and f.get("cluster") == "true":
            return fail("failed to fetch endpoints from etcd cluster member list: " + (msg or "context deadline exceeded"))
        return fail(msg or "context deadline exceeded")
    if cmd == ["member", "list"]:
        return member_list(ms, out_fmt)
    if cmd == ["member", "remove"]:
        try:
            etcd_member.client(url, timeout=5).request("POST", "/emu/etcd/members/remove", {"id": mid})
        except emu.ApiError as e:
            return fail((e.body or {}).get("message") if e.status else "context deadline exceeded")
        print("Member %16x removed from cluster %16x" % (mid, CLUSTER_ID))
        return 0
    eps = [m["clientURLs"][0] for m in ms] if f.get("cluster") == "true" else (f.get("endpoints") or ep).split(",")
    if cmd == ["endpoint", "status"]:
        return endpoint_status(eps, out_fmt)
    return endpoint_health(eps, out_fmt)


CLUSTER_ID = int(hashlib.sha256(b"gpuctl-emu etcd cluster").hexdigest()[:15], 16)


def normalize(argv):
    """-w X and -wX as --write-out X (etcdctl's shorthand)."""
    out = []
    for a in argv:
        if a == "-w":
            out.append("--write-out")
        elif a.startswith("-w") and not a.startswith("--"):
            out.append("--write-out=" + a[2:].lstrip("="))
        else:
            out.append(a)
    return out


def bad_args(msg):
    print("Error: " + msg, file=sys.stderr)
    return 128


def table(headers, rows):
    """tablewriter v0.0.5 as etcdctl 3.6 uses it: upper-case centred headers, right-aligned cells."""
    w = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    line = "+" + "+".join("-" * (x + 2) for x in w) + "+"
    def centre(t, width):  # tablewriter's Pad: the odd space goes to the right
        left = (width - len(t)) // 2
        return " " * left + t + " " * (width - len(t) - left)
    out = [line, "|" + "|".join(" " + centre(h.upper(), w[i]) + " " for i, h in enumerate(headers)) + "|", line]
    for r in rows:
        out.append("|" + "|".join(" " + c.rjust(w[i]) + " " for i, c in enumerate(r)) + "|")
    out.append(line)
    print("\n".join(out))


def header(member_id, rv=0):
    return {"cluster_id": CLUSTER_ID, "member_id": member_id, "revision": rv, "raft_term": 2}


def member_list(ms, fmt):
    rows = [["%x" % m["id"], "started" if m.get("name") else "unstarted", m.get("name", ""), ",".join(m["peerURLs"]),
             ",".join(m["clientURLs"]), "true" if m.get("isLearner") else "false"] for m in ms]
    if fmt == "json":
        h = header(ms[0]["id"] if ms else 0)
        del h["revision"]
        print(json.dumps({"header": h, "members": [dict({"ID": m["id"], "name": m.get("name", ""), "peerURLs": m["peerURLs"],
                                                          "clientURLs": m["clientURLs"]}, **({"isLearner": True} if m.get("isLearner") else {}))
                                                    for m in ms]}, separators=(",", ":")))
    elif fmt == "table":
        table(["ID", "Status", "Name", "Peer Addrs", "Client Addrs", "Is Learner"], rows)
    else:
        for r in rows:
            print(", ".join(r))
    return 0


def endpoint_status(eps, fmt):
    import etcd_member
    got, rc = [], 0
    for ep in eps:
        try:
            st = etcd_member.client(ep if ep.startswith("http") else "https://" + ep, timeout=2).get("/emu/etcd/endpoint-status")
            got.append((ep, st))
        except emu.ApiError:
            print("Failed to get the status of endpoint %s (context deadline exceeded)" % ep, file=sys.stderr)
            rc = 1
    size = 20480
    if fmt == "json":
        print(json.dumps([{"Endpoint": ep, "Status": dict({"header": header(st["id"], st["rv"]), "version": ETCD_VERSION, "dbSize": size,
                                                             "leader": st["leader"], "raftIndex": st["rv"], "raftTerm": 2,
                                                             "raftAppliedIndex": st["rv"], "dbSizeInUse": 16384, "storageVersion": "3.6.0"},
                                                            **({"errors": st["errors"]} if st["errors"] else {}),
                                                            **({"isLearner": True} if st["isLearner"] else {}))}
                          for ep, st in got], separators=(",", ":")))
    else:
        rows = [[ep, "%x" % st["id"], ETCD_VERSION, "3.6.0", "20 kB", "16 kB", "20%", "0 B",
                 "true" if st["leader"] == st["id"] and st["id"] else "false", "true" if st["isLearner"] else "false", "2",
                 str(st["rv"]), str(st["rv"]), ", ".join(st["errors"]), "", "false"] for ep, st in got]
        if fmt == "table":
            table(["Endpoint", "ID", "Version", "Storage Version", "DB Size", "In Use", "Percentage not in use", "Quota",
                   "Is Leader", "Is Learner", "Raft Term", "Raft Index", "Raft Applied Index", "Errors",
                   "Downgrade Target Version", "Downgrade Enabled"], rows)
        else:
            for r in rows:
                print(", ".join(r))
    return rc


def endpoint_health(eps, fmt):
    import etcd_member
    res = []
    for ep in eps:
        t0 = time.time()
        try:
            st = etcd_member.client(ep if ep.startswith("http") else "https://" + ep, timeout=2).get("/emu/etcd/endpoint-status")
            err = st["errors"][0] if st["errors"] else None
        except emu.ApiError:
            err = "context deadline exceeded"
        took = "%.6fms" % ((time.time() - t0) * 1000)
        res.append({"endpoint": ep, "health": err is None, "took": took, **({"error": err} if err else {})})
    if fmt == "json":
        print(json.dumps(res, separators=(",", ":")))
    elif fmt == "table":
        table(["Endpoint", "Health", "Took", "Error"], [[r["endpoint"], str(r["health"]).lower(), r["took"], r.get("error", "")] for r in res])
    else:
        for r in res:
            if r["health"]:
                print("%s is healthy: successfully committed proposal: took = %s" % (r["endpoint"], r["took"]))
            else:
                print("%s is unhealthy: failed to commit proposal: %s" % (r["endpoint"], r["error"]), file=sys.stderr)
    if any(not r["health"] for r in res):
        return fail("unhealthy cluster")
    return 0


def snapshot_save(path, ep, visible):
    if not can_see(path, visible) or not os.path.isdir(os.path.dirname(emu.R(os.path.abspath(path))) or "/"):
        return fail("could not open %s.part (open %s.part: no such file or directory)" % (path, path))
    store = emu.read(DATA_DIR + "/" + STORE)
    if store is None:
        return fail("etcdserver: no data")
    data = store.encode()
    blob = data + hashlib.sha256(data).digest()
    part = path + ".part"
    zlog("info", "snapshot/v3_snapshot.go:65", "created temporary db file", path=part)
    zlog("info", "v3/maintenance.go:212", "opened snapshot stream; downloading")
    zlog("info", "snapshot/v3_snapshot.go:73", "fetching snapshot", endpoint=ep)
    p = emu.R(os.path.abspath(part))
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(blob)
    os.chmod(p, 0o600)
    os.replace(p, emu.R(os.path.abspath(path)))
    zlog("info", "v3/maintenance.go:220", "completed snapshot read; closing")
    zlog("info", "snapshot/v3_snapshot.go:88", "fetched snapshot", endpoint=ep, size="%d B" % len(blob), took="now")
    zlog("info", "snapshot/v3_snapshot.go:97", "saved", path=path)
    print("Snapshot saved at " + path)
    return 0


def can_see(path, visible):
    if visible is None:
        return True
    ap = os.path.abspath(path)
    return any(ap == m or ap.startswith(m + "/") for m in visible)


def signed_by(cert, ca):
    r = subprocess.run(["openssl", "verify", "-CAfile", emu.R(ca), emu.R(cert)], capture_output=True, text=True)
    return r.returncode == 0


# ---------------------------------------------------------------- etcdutl
def read_snapshot(path, skip_hash):
    try:
        with open(emu.R(path), "rb") as f:
            blob = f.read()
    except OSError:
        raise ValueError("open %s: no such file or directory" % path)
    if len(blob) < 33:
        raise ValueError("snapshot file integrity check failed. 32 bytes of hash expected, file is %d bytes" % len(blob))
    data, digest = blob[:-32], blob[-32:]
    if hashlib.sha256(data).digest() != digest:
        if not skip_hash:
            raise ValueError("expected sha256 [%s], got [%s]" % (digest.hex(), hashlib.sha256(data).hexdigest()))
        data = blob
    try:
        return json.loads(data.decode())
    except ValueError:
        raise ValueError("invalid database: %s is not an etcd snapshot" % path)


def etcdutl(argv):
    try:
        f, pos = flags(argv, {"data-dir", "name", "initial-cluster", "initial-cluster-token", "initial-advertise-peer-urls",
                              "wal-dir", "write-out", "w", "bump-revision"})
    except ValueError as e:
        return fail(str(e))
    if pos[:1] == ["version"] or f.get("version"):
        print("etcdutl version: %s\nAPI version: 3.6" % ETCD_VERSION)
        return 0
    if pos[:1] != ["snapshot"] or len(pos) != 3 or pos[1] not in ("restore", "status"):
        return fail("the test bed's etcdutl emulates only `snapshot restore FILE`, `snapshot status FILE` and `version`")
    path = pos[2]
    try:
        st = read_snapshot(path, f.get("skip-hash-check") == "true")
    except ValueError as e:
        return fail(str(e))
    if pos[1] == "status":
        blob = open(emu.R(path), "rb").read()
        h = int.from_bytes(hashlib.sha256(blob).digest()[:4], "big")
        rev, keys, size = int(st.get("rv", 1)), len(st.get("objects", {})), len(blob)
        if (f.get("write-out") or f.get("w")) == "json":
            print(json.dumps({"hash": h, "revision": rev, "totalKey": keys, "totalSize": size, "version": "3.6.0"}))
        else:
            print("+----------+----------+------------+------------+---------+\n"
                  "|   HASH   | REVISION | TOTAL KEYS | TOTAL SIZE | VERSION |\n"
                  "+----------+----------+------------+------------+---------+\n"
                  "| %08x | %8d | %10d | %7d kB | %7s |\n"
                  "+----------+----------+------------+------------+---------+" % (h, rev, keys, size // 1024, "3.6.0"))
        return 0
    name = f.get("name", "default")
    try:
        cluster = restore_cluster(name, f.get("initial-cluster", "default=http://localhost:2380"),
                                  f.get("initial-cluster-token", "etcd-cluster"),
                                  f.get("initial-advertise-peer-urls", "http://localhost:2380"))
    except ValueError as e:
        return fail(str(e))
    dd = f.get("data-dir") or name + ".etcd"
    if os.path.exists(emu.R(dd)) and (not os.path.isdir(emu.R(dd)) or os.listdir(emu.R(dd))):
        return fail('data-dir "%s" not empty or could not be read' % dd)
    zlog("info", "snapshot/v3_snapshot.go:265", "restoring snapshot", path=path, **{"wal-dir": dd + "/member/wal", "data-dir": dd,
                                                                                   "snap-dir": dd + "/member/snap"})
    os.makedirs(emu.R(dd), mode=0o700, exist_ok=True)
    os.chmod(emu.R(dd), 0o700)
    st["heartbeats"] = st.get("heartbeats", {})
    # the snapshot's membership is trimmed and the new cluster's written (TrimMembershipFromBackend, then every
    # --initial-cluster member added): the members are exactly the --initial-cluster list
    st.setdefault("etcd", {})["members"] = cluster
    emu.write(dd + "/member/snap/db", json.dumps(st, sort_keys=True), 0o600)
    emu.write(dd + "/" + STORE, json.dumps(st, indent=2, sort_keys=True) + "\n", 0o600)
    mine = next(m for m in cluster if m["name"] == name)
    # this member's identity beside the store (what etcd keeps in its WAL metadata: its member ID)
    emu.write(dd + "/gpuctl-emu/member.json", json.dumps({"name": name, "clientURL": mine["clientURLs"][0]}), 0o600)
    for d in (dd + "/member", dd + "/member/snap", dd + "/gpuctl-emu"):
        os.chmod(emu.R(d), 0o700)
    zlog("info", "snapshot/v3_snapshot.go:293", "restored snapshot", path=path, **{"wal-dir": dd + "/member/wal", "data-dir": dd,
                                                                                  "snap-dir": dd + "/member/snap"})
    return 0


def urls(text):
    """types.NewURLs: comma-separated http(s) URLs of host:port, no path."""
    out = []
    for u in text.split(","):
        m = re.match(r"^([a-z]+)://([^/?#]*)(.*)$", u.strip())
        if not m:
            raise ValueError('parse "%s": missing protocol scheme' % u.strip())
        scheme, hostport, rest = m.groups()
        if scheme not in ("http", "https", "unix", "unixs"):
            raise ValueError("URL scheme must be http, https, unix, or unixs: %s" % u.strip())
        if not re.match(r"^(\[[0-9a-fA-F:.]+\]|[^:\[\]]+):[0-9]+$", hostport):
            raise ValueError('URL address does not have the form "host:port": %s' % u.strip())
        if rest not in ("", "/"):
            raise ValueError("URL must not contain a path: %s" % u.strip())
        out.append(u.strip())
    return sorted(out)


def member_id(peer_urls, token):
    """membership.computeMemberID with no time (a restore): sha1 over the sorted peer URLs and the cluster token, its
    first 8 bytes big-endian, so every member restored with the same --initial-cluster and token agrees on every ID."""
    return int.from_bytes(hashlib.sha1(("".join(sorted(peer_urls)) + token).encode()).digest()[:8], "big")


def restore_cluster(name, initial_cluster, token, advertise):
    """The members of the cluster `etcdutl snapshot restore` bootstraps, with etcd's own refusals (types.NewURLsMap,
    ServerConfig.VerifyBootstrap): the local name must be in --initial-cluster, its URLs must be
    --initial-advertise-peer-urls, no URL twice. Each member's client URL is what its etcd will publish when it
    starts (kubeadm: https://ADDRESS:2379, the peer URL's host)."""
    by_name = {}
    for part in initial_cluster.split(","):
        n, eq, u = part.partition("=")
        if not eq:
            raise ValueError("failed to parse %s: %s" % (initial_cluster, part))
        by_name.setdefault(n.strip(), []).extend(urls(u))
    seen = [u for us in by_name.values() for u in us]
    if len(seen) != len(set(seen)):
        raise ValueError("initial cluster %s has duplicate url" % initial_cluster)
    if name not in by_name:
        raise ValueError("couldn't find local name %s in the initial cluster configuration" % json.dumps(name))
    ap = urls(advertise)
    if sorted(by_name[name]) != ap:
        raise ValueError("--initial-cluster has %s=%s but missing from --initial-advertise-peer-urls=%s (%s != %s)"
                         % (name, ",".join(by_name[name]), advertise, json.dumps(",".join(ap)), json.dumps(",".join(sorted(by_name[name])))))
    out = []
    for n, us in by_name.items():
        host = re.match(r"^[a-z]+://(\[[^]]+\]|[^:]+):", us[0]).group(1)
        out.append({"id": member_id(us, token), "name": n, "peerURLs": us,
                    "clientURLs": ["https://%s:2379" % host], "isLearner": False})
    return sorted(out, key=lambda m: m["id"])


# ---------------------------------------------------------------- crictl ps / exec
def containers():
    """The control plane's static pods' containers, as `crictl ps` lists them (static_pods.py: running while the kubelet
    runs them for their manifests; the API server's while its unit runs)."""
    import static_pods
    return [{"id": cid, "name": name, "pod": "%s-%s" % (name, emu.hostname()), "state": "CONTAINER_RUNNING"}
            for cid, name, _state, _created in static_pods.containers()]


def crictl(cmd, args):
    if cmd == "ps":
        try:
            f, pos = flags(args, {"name", "state", "label", "pod", "output", "o"})
        except ValueError as e:
            print("FATA[0000] " + str(e), file=sys.stderr); return 1
        quiet = "-q" in args or f.get("quiet") == "true"
        cs = [c for c in containers() if not f.get("name") or re.search(f["name"], c["name"])]
        if f.get("state") and f["state"].lower() not in ("running", "container_running"):
            cs = []
        if quiet:
            for c in cs:
                print(c["id"])
        else:
            print("%-16s%-16s%-16s%-20s%-10s%-24s%-16s%s" % ("CONTAINER", "IMAGE", "CREATED", "STATE", "NAME", "ATTEMPT", "POD ID", "POD"))
            for c in cs:
                print("%-16s%-16s%-16s%-20s%-10s%-24s%-16s%s" % (c["id"][:13], c["id"][13:26], "About an hour ago", "Running",
                                                                c["name"], "0", c["id"][26:39], c["pod"]))
        return 0
    # exec [-i] [-t] [-s] CONTAINER COMMAND [ARG...]
    rest = [a for a in args]
    while rest and rest[0] in ("-i", "-t", "-it", "-s", "--interactive", "--tty", "--sync"):
        rest.pop(0)
    if len(rest) < 2:
        print('FATA[0000] ID cannot be empty', file=sys.stderr); return 1
    cid, argv = rest[0], rest[1:]
    match = [c for c in containers() if c["id"].startswith(cid)]
    if not match:
        print('FATA[0000] execing command in container: rpc error: code = NotFound desc = an error occurred when try to find '
              'container "%s": not found' % cid, file=sys.stderr); return 1
    if match[0]["name"] != "etcd":
        print('FATA[0000] execing command in container: only the etcd container is emulated', file=sys.stderr); return 1
    if os.path.basename(argv[0]) == "etcdctl":
        return etcdctl(argv[1:], visible=ETCD_POD_MOUNTS)
    if os.path.basename(argv[0]) == "etcdutl":
        return etcdutl(argv[1:])
    print('FATA[0000] execing command in container: exec failed: unable to start container process: exec: "%s": executable file '
          'not found in $PATH' % argv[0], file=sys.stderr)
    return 126


if __name__ == "__main__":
    tool = os.path.basename(sys.argv[0])
    sys.exit(etcdutl(sys.argv[1:]) if tool == "etcdutl" else etcdctl(sys.argv[1:]))
