"""The stacked etcd member each emulated control plane runs beside its API server (port 2379, mutual TLS under the etcd
CA, as etcd's client port). Every master's API server serves ONE store: the members are listed in the store itself
(state "etcd" -> members), the leader is the reachable voting member with the newest revision (the first in member
order on a tie), a follower's API server forwards each request to the leader with the caller's authenticated identity,
and the leader writes, then pushes the whole store to every reachable member before it answers. Without a majority of
voting members reachable the API server answers etcd's "etcdserver: request timed out". A member joins as a learner
(`kubeadm join --control-plane`: MemberAddAsLearner, then MemberPromote once it has caught up), so it does not count
towards the quorum until it runs. This host's member name and client URL live in member.json, beside the store."""
import json
import os
import threading
import time

import emu

PKI = "/etc/kubernetes/pki"
DIR = "/var/lib/etcd/gpuctl-emu"
SELF_FILE = DIR + "/member.json"
PORT = 2379
TIMED_OUT = "etcdserver: request timed out"
NOT_IN_SYNC = "etcdserver: can only promote a learner member which is in sync with leader"
TOO_MANY_LEARNERS = "etcdserver: too many learner members in cluster"
NO_LEADER = "etcdserver: no leader"
NOT_FOUND = "etcdserver: member not found"
NOT_ENOUGH_STARTED = "etcdserver: re-configuration failed due to not enough started members"
REMOVED = "etcdserver: the member has been permanently removed from the cluster"


class Unavailable(Exception):
    pass


class Refused(Exception):
    pass


def seed(name, addr):
    """The first member (kubeadm init): this host's identity, and the store's member list."""
    emu.write_json(SELF_FILE, {"name": name, "clientURL": url(addr)}, 0o600)
    return {"members": [member(name, addr, learner=False)]}


def url(addr):
    return "https://%s:%d" % ("[%s]" % addr if ":" in addr else addr, PORT)


def member(name, addr, learner):
    mid = int.from_bytes(os.urandom(8), "big") >> 1
    return {"id": mid, "name": name, "peerURLs": ["https://%s:2380" % ("[%s]" % addr if ":" in addr else addr)],
            "clientURLs": [url(addr)], "isLearner": learner}


def me():
    return emu.read_json(SELF_FILE) or {}


def client(target, timeout=2):
    """A client of another member, authenticated by the etcd CA (etcd/healthcheck-client, as kubeadm's etcd client)."""
    return emu.Client(target, ca=emu.read(PKI + "/etcd/ca.crt"), cert=emu.read(PKI + "/etcd/healthcheck-client.crt"),
                      key=emu.read(PKI + "/etcd/healthcheck-client.key"), timeout=timeout)


def members(state):
    return (state.get("etcd") or {}).get("members") or []


def clustered(state):
    return len(members(state)) > 1 and bool(me().get("clientURL"))


def removed(state):
    """This host's member was removed (etcdctl member remove, kubeadm reset of another host): it serves nothing."""
    mine = me().get("clientURL")
    return bool(mine) and bool(members(state)) and not any(m["clientURLs"][0] == mine for m in members(state))


def quorum(voters):
    return voters // 2 + 1


def view(state):
    """[(member, revision or None when unreachable)], asking every other member in parallel."""
    mine = me().get("clientURL")
    res = {}

    def probe(m):
        try:
            res[m["id"]] = client(m["clientURLs"][0], timeout=1.5).get("/emu/etcd/status")["rv"]
        except (emu.ApiError, KeyError, ValueError):
            res[m["id"]] = None
    threads = []
    for m in members(state):
        if m["clientURLs"][0] == mine:
            res[m["id"]] = state.get("rv", 0)
        else:
            t = threading.Thread(target=probe, args=(m,))
            t.start()
            threads.append(t)
    for t in threads:
        t.join()
    return [(m, res.get(m["id"])) for m in members(state)]


def leader(state):
    """The member that serves writes now; Unavailable without a majority of the voting members."""
    v = view(state)
    voters = [(m, rv) for m, rv in v if not m.get("isLearner")]
    up = [(i, m, rv) for i, (m, rv) in enumerate(voters) if rv is not None]
    if len(up) * 2 <= len(voters):
        raise Unavailable(TIMED_OUT)
    return max(up, key=lambda x: (x[2], -x[0]))[1], v


def is_me(m):
    return m["clientURLs"][0] == me().get("clientURL")


def replicate(state, v):
    """Pushes the store to every other reachable member; Unavailable when fewer than a majority of voters hold it."""
    voters = sum(1 for m, _ in v if not m.get("isLearner"))
    acks = 0
    for m, rv in v:
        ok = is_me(m)
        if not ok and rv is not None:
            try:
                client(m["clientURLs"][0]).request("POST", "/emu/etcd/replicate", state)
                ok = True
            except emu.ApiError:
                ok = False
        if ok and not m.get("isLearner"):
            acks += 1
    if acks * 2 <= voters:
        raise Unavailable(TIMED_OUT)


class Peer:
    """The member's own server: status, replicate, forward, member add/promote/list. `local` runs one API request
    on this member's store and returns (code, body, state-after); `store` is (load, save, lock) of the API server."""

    def __init__(self, local, load_state, store_state, lock):
        self.local, self.load_state, self.store_state, self.lock = local, load_state, store_state, lock

    def serve(self, method, path, who, body):
        """One API request as the cluster serves it (the API server's entry point)."""
        state = self.load_state()
        if removed(state):
            return 500, REMOVED
        if not clustered(state):
            return self.local(method, path, who, body)[:2]
        try:
            lead, v = leader(state)
            if is_me(lead):
                return self.lead(method, path, who, body, v)
            r = client(lead["clientURLs"][0], timeout=20).request(
                "POST", "/emu/etcd/forward", {"method": method, "path": path, "who": who, "body": body})
            return r["code"], r["body"]
        except Unavailable as e:
            return 500, str(e)
        except emu.ApiError as e:
            return 500, e.body.get("message") if e.body and e.status else TIMED_OUT

    def lead(self, method, path, who, body, v):
        code, out, state = self.local(method, path, who, body)
        if len(v) > 1:
            replicate(state, v)
        return code, out

    def handle(self, method, path, body):
        """The member's HTTP API (called with an etcd-CA-authenticated peer); returns (code, obj)."""
        if path == "/emu/etcd/status":
            return 200, {"name": me().get("name"), "rv": self.load_state().get("rv", 0)}
        if path == "/emu/etcd/replicate" and method == "POST":
            with self.lock:
                if body.get("rv", 0) >= self.load_state().get("rv", 0):
                    self.store_state(body)
            return 200, {}
        if path == "/emu/etcd/members" and method == "GET":
            if removed(self.load_state()):
                return 503, {"message": REMOVED}
            return 200, {"members": members(self.load_state())}
        if path == "/emu/etcd/endpoint-status" and method == "GET":
            return 200, self.endpoint_status()
        try:
            state = self.load_state()
            if clustered(state):
                lead, v = leader(state)
                if not is_me(lead):
                    try:
                        return 200, client(lead["clientURLs"][0], timeout=20).request(method, path, body)
                    except emu.ApiError as e:
                        return e.status or 503, e.body or {"message": TIMED_OUT}
            else:
                v = [(m, state.get("rv", 0)) for m in members(state)]
            if path == "/emu/etcd/forward" and method == "POST":
                code, out = self.lead(body["method"], body["path"], body["who"], body["body"], v)
                return 200, {"code": code, "body": out}
            if path == "/emu/etcd/members/add" and method == "POST":
                return 200, self.add(body, v)
            if path == "/emu/etcd/members/promote" and method == "POST":
                return self.promote(body["id"])
            if path == "/emu/etcd/members/remove" and method == "POST":
                return self.remove(body["id"], v)
        except Unavailable as e:
            return 503, {"message": str(e)}
        except Refused as e:
            return 412, {"message": str(e)}
        return 404, {"message": "404 page not found"}

    def add(self, body, v):
        with self.lock:
            state = self.load_state()
            ms = state.setdefault("etcd", {}).setdefault("members", [])
            old = next((m for m in ms if m["name"] == body["name"]), None)
            if old is not None:  # the same node joining again (a re-run): its member, as it stands
                return {"member": old, "members": ms, "state": state}
            if any(m.get("isLearner") for m in ms):  # etcd's --max-learners defaults to 1
                raise Refused(TOO_MANY_LEARNERS)
            m = member(body["name"], body["address"], learner=True)
            ms.append(m)
            state["rv"] = state.get("rv", 0) + 1
            self.store_state(state)
        replicate(state, v)
        return {"member": m, "members": ms, "state": state}

    def endpoint_status(self):
        """etcd's Maintenance.Status of this member: its ID, the leader it sees (0 and "etcdserver: no leader" without a
        majority), its revision as the raft index, learner or not."""
        state = self.load_state()
        mine = next((m for m in members(state) if is_me(m)), None)
        out = {"id": mine["id"] if mine else 0, "rv": state.get("rv", 0), "isLearner": bool(mine and mine.get("isLearner")),
               "leader": 0, "errors": []}
        if mine is None:
            out["errors"] = [REMOVED]
            return out
        try:
            lead = leader(state)[0] if clustered(state) else mine
            out["leader"] = lead["id"]
        except Unavailable:
            out["errors"] = [NO_LEADER]
        return out

    def remove(self, mid, v):
        """MemberRemove on the leader: refused (etcd's strict reconfiguration check) when the members left would have
        fewer started voters than their quorum; the new member list reaches the removed member too (it stops serving)."""
        with self.lock:
            state = self.load_state()
            target = next((m for m in members(state) if m["id"] == mid), None)
            if target is None:
                return 404, {"message": NOT_FOUND}
            left = [(m, rv) for m, rv in v if m["id"] != mid and not m.get("isLearner")]
            started = sum(1 for _, rv in left if rv is not None)
            if not target.get("isLearner") and started < quorum(len(left)):
                return 412, {"message": NOT_ENOUGH_STARTED}
            state["etcd"]["members"] = [m for m in members(state) if m["id"] != mid]
            state["rv"] = state.get("rv", 0) + 1
            self.store_state(state)
        for m, rv in v:
            if m["id"] == mid and rv is not None and not is_me(m):
                try:
                    client(m["clientURLs"][0]).request("POST", "/emu/etcd/replicate", state)
                except emu.ApiError:
                    pass
        replicate(state, [(m, rv) for m, rv in v if m["id"] != mid])
        return 200, {"members": members(state)}

    def promote(self, mid):
        state = self.load_state()
        target = next((m for m in members(state) if m["id"] == mid), None)
        if target is None:
            return 404, {"message": "etcdserver: member not found"}
        if not target.get("isLearner"):
            return 200, {"members": members(state)}
        try:
            rv = client(target["clientURLs"][0], timeout=1.5).get("/emu/etcd/status")["rv"]
        except emu.ApiError:
            rv = None
        if rv is None or rv < state.get("rv", 0):
            return 412, {"message": NOT_IN_SYNC}
        with self.lock:
            state = self.load_state()
            for m in members(state):
                if m["id"] == mid:
                    m["isLearner"] = False
            state["rv"] = state.get("rv", 0) + 1
            self.store_state(state)
        lead, v = leader(state)
        replicate(state, v)
        return 200, {"members": members(state)}


def start_server(peer, make_server):
    """Serves `peer` on :2379 under mutual TLS (etcd/server.crt, clients signed by the etcd CA)."""
    import http.server
    import socketserver
    import ssl

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def go(self, method):
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n)) if n else None
            code, obj = peer.handle(method, self.path, body)
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.go("GET")

        def do_POST(self):
            self.go("POST")

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(emu.R(PKI + "/etcd/server.crt"), emu.R(PKI + "/etcd/server.key"))
    ctx.load_verify_locations(emu.R(PKI + "/etcd/ca.crt"))
    ctx.verify_mode = ssl.CERT_REQUIRED
    srv = make_server(("0.0.0.0", PORT), H, ctx)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv
