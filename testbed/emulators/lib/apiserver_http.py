# The emulated kube-apiserver's HTTP side: authentication (client certificates, bootstrap tokens), the bootstrappers'
# RBAC, path parsing, the REST verbs on the store, subresources (log, exec, eviction, status), CSRs, the kubelets'
# heartbeat endpoint, the TLS server, and the etcd member's routing of every request to the leader's store
# (etcd_member.py).
import hashlib, http.server, json, re, socket, socketserver, ssl, threading, time
import emu
import etcd_member
import kueue
import nodedrain
import apiserver_store as store
from apiserver_store import LOCK, PKI, Store, delete, dry_run, field_match, get, load, merge, objs, put, save, selector_match, status
from apiserver_controllers import reconcile, tokens
from apiserver_pods import CNI, exec_in, flannel_conf, gpu_pods, pod_kind

def rbac_grants(groups, secret):
    """The one Role kubeadm creates for bootstrappers: kube-system/kubeadm:kubeadm-certs (get on that Secret)."""
    role, rb = get("roles", "kube-system", "kubeadm:kubeadm-certs"), get("rolebindings", "kube-system", "kubeadm:kubeadm-certs")
    if not role or not rb or not any(s.get("kind") == "Group" and s.get("name") in groups for s in rb.get("subjects") or []):
        return False
    return any("get" in r.get("verbs", []) and "secrets" in r.get("resources", []) and secret in (r.get("resourceNames") or [secret])
               for r in role.get("rules") or [])


def parse_path(path):
    """-> (resource, namespace, name, subresource) or None"""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[:2] == ["api", "v1"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        rest = parts[3:]
    else:
        return None
    ns = None
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) > 2:
        ns, rest = rest[1], rest[2:]
    if not rest:
        return None
    return rest[0], ns, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, obj, ctype="application/json"):
        data = (obj if isinstance(obj, str) else json.dumps(obj)).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def user(self):
        """(name, groups) or None for anonymous; raises ValueError for a bad token."""
        cert = self.connection.getpeercert() if hasattr(self.connection, "getpeercert") else None
        if cert:
            subj = dict(x[0] for x in cert.get("subject", ()))
            groups = [v for rdn in cert.get("subject", ()) for k, v in rdn if k == "organizationName"]
            return subj.get("commonName", ""), groups
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            tok = auth[7:].strip()
            m = re.match(r"^([a-z0-9]{6})\.([a-z0-9]{16})$", tok)
            if m:
                t = tokens().get(m.group(1))
                if t and t[1]["token-secret"] == m.group(2) and t[1].get("usage-bootstrap-authentication") == "true":
                    exp = t[1].get("expiration")
                    if not exp or emu.parse_rfc3339(exp) > time.time():
                        return "system:bootstrap:" + m.group(1), ["system:bootstrappers", "system:authenticated"] + \
                            [g for g in (t[1].get("auth-extra-groups") or "").split(",") if g]
            raise ValueError("bad token")
        return None

    def body(self):
        return json.loads(self._raw) if self._raw else None

    def handle_any(self, method):
        path = self.path.split("?")[0]
        q = {}
        if "?" in self.path:
            from urllib.parse import parse_qs
            q = {k: v[0] for k, v in parse_qs(self.path.split("?", 1)[1]).items()}
        if path == "/readyz" and not etcd_reachable():
            # kube-apiserver's readyz with its etcd checks failing (this member in the minority, or removed)
            body = "[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n"
            return self.send(500, body if "verbose" in q else "readyz check failed\n", "text/plain")
        if path in ("/healthz", "/livez", "/readyz"):
            return self.send(200, "ok", "text/plain")
        if path == "/version":
            return self.send(200, {"major": "1", "minor": store.VERSION.split(".")[1], "emulationMajor": "1",
                                   "emulationMinor": store.VERSION.split(".")[1], "gitVersion": "v" + store.VERSION,
                                   "gitCommit": hashlib.sha1(store.VERSION.encode()).hexdigest(), "gitTreeState": "clean",
                                   "buildDate": "2025-12-17T12:32:04Z", "goVersion": "go1.25.5", "compiler": "gc",
                                   "platform": "linux/amd64"})
        try:
            # a follower's store in memory is as of its last request; the leader's replica is in its state file
            with LOCK:
                load()
                who = self.user()
        except ValueError:
            return self.send(401, status(401, "Unauthorized", "Unauthorized"))
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n).decode() if n else ""
        # one store for every master: a follower's request runs on the etcd leader's member (etcd_member.py)
        code, out = PEER.serve(method, self.path, list(who) if who else None, raw)
        if code == 500 and isinstance(out, str) and out.startswith("etcdserver:"):
            out = status(500, "", out)
        if isinstance(out, str):
            return self.send(code, out, "text/plain")
        return self.send(code, out)

    def run_local(self, method, full, who, raw):
        """One request on this member's store: (code, body, the store after it)."""
        path = full.split("?")[0]
        q = {}
        if "?" in full:
            from urllib.parse import parse_qs
            q = {k: v[0] for k, v in parse_qs(full.split("?", 1)[1]).items()}
        self._raw = raw
        with LOCK:
            load()
            reconcile()
            try:
                code, out = self.route(method, path, q, tuple(who) if who else None)
            finally:
                save()
            return code, out, json.loads(json.dumps(store.S))

    def route(self, method, path, q, who):
        name_, groups = who or ("system:anonymous", ["system:unauthenticated"])
        admin = who is not None and ("kubeadm:cluster-admins" in groups or "system:masters" in groups)
        is_node = "system:nodes" in groups
        boot = "system:bootstrappers" in groups
        if path == "/emu/v1/heartbeat" and method == "POST" and is_node:
            return self.heartbeat(name_[len("system:node:"):], self.body())
        pp = parse_path(path)
        if pp is None:
            if path in ("/api", "/apis", "/api/v1"):
                return 200, {"kind": "APIVersions", "versions": ["v1"]}
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        res, ns, name, sub = pp
        verb = {"GET": "get" if name else "list", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[method]
        anon_ok = method == "GET" and res == "configmaps" and ns == "kube-public" and name == "cluster-info"
        allowed = admin or anon_ok or is_node or (boot and (res in ("certificatesigningrequests",) or
                                                            (res == "configmaps" and ns == "kube-system" and method == "GET")
                                                            or (res == "nodes" and method == "GET")
                                                            or (res == "secrets" and method == "GET" and ns == "kube-system"
                                                                and rbac_grants(groups, name))))
        if not allowed:
            scope = 'in the namespace "%s"' % ns if ns else "at the cluster scope"
            grp = store.RES.get(res, ("v1",))[0]
            grp = grp.split("/")[0] if "/" in grp else ""
            return 403, status(403, "Forbidden", '%s%s is forbidden: User "%s" cannot %s resource "%s" in API group "%s" %s'
                               % (res, ' "%s"' % name if name else "", name_, verb, res, grp, scope))
        if res == "pods" and sub == "log":
            p = get("pods", ns, name)
            if not p:
                return 404, status(404, "NotFound", 'pods "%s" not found' % name)
            cs = (p.get("status") or {}).get("containerStatuses") or []
            if not cs or "waiting" in cs[0]["state"] and cs[0]["state"]["waiting"]["reason"] == "ContainerCreating":
                return 400, status(400, "BadRequest", 'container "%s" in pod "%s" is waiting to start: ContainerCreating'
                                   % (p["spec"]["containers"][0]["name"], name))
            return 200, store.S.get("logs", {}).get(p["metadata"]["uid"], "")
        if res == "pods" and sub == "exec" and method == "POST":
            # emulator form of the exec stream: the command as JSON in, its output and exit code as JSON out
            p = get("pods", ns, name)
            if not p:
                return 404, status(404, "NotFound", 'pods "%s" not found' % name)
            phase = (p.get("status") or {}).get("phase")
            if phase != "Running":
                return 400, status(400, "BadRequest", "cannot exec into a container in a completed pod; current phase is %s" % phase
                                   if phase in ("Succeeded", "Failed") else 'unable to upgrade connection: container not found ("%s")'
                                   % p["spec"]["containers"][0]["name"])
            return 200, exec_in(p, [str(w) for w in (self.body() or {}).get("command") or []])
        if res == "pods" and sub == "eviction" and method == "POST":
            p = get("pods", ns, name)
            if not p:
                return 404, status(404, "NotFound", 'pods "%s" not found' % name, {"name": name, "kind": "pods"})
            return nodedrain.evict(p, objs("poddisruptionbudgets", ns), objs("pods", ns),
                                   lambda pod: delete("pods", ns, pod["metadata"]["name"]), status)
        if res == "certificatesigningrequests" and method == "POST":
            return self.csr(self.body(), name_)
        gvk = store.RES.get(res)
        if method == "GET":
            if name:
                o = get(res, ns, name)
                if not o:
                    return 404, status(404, "NotFound", '%s "%s" not found' % (res if not gvk or "/" not in gvk[0] else res + "." + gvk[0].split("/")[0], name),
                                       {"name": name, "kind": res})
                return 200, o
            items = objs(res, ns)
            if q.get("labelSelector"):
                items = [o for o in items if selector_match(o["metadata"].get("labels") or {}, q["labelSelector"])]
            if q.get("fieldSelector"):
                items = [o for o in items if field_match(o, q["fieldSelector"])]
            kind = (gvk[1] if gvk else res) + "List"
            return 200, {"kind": kind, "apiVersion": gvk[0] if gvk else "v1", "metadata": {"resourceVersion": str(store.S["rv"])}, "items": items}
        if method in ("POST", "PUT"):
            o = self.body()
            o.setdefault("metadata", {})
            if res == "jobs" and method == "POST":
                refused = kueue.job_webhook(Store, o)
                if refused:
                    return 500, status(500, "InternalError", refused)
            if ns and gvk and gvk[2]:
                o["metadata"]["namespace"] = ns
            if method == "POST" and get(res, o["metadata"].get("namespace") if (not gvk or gvk[2]) else None, o["metadata"]["name"]):
                return 409, status(409, "AlreadyExists", '%s "%s" already exists' % (res, o["metadata"]["name"]))
            if (gvk and gvk[2]) and o["metadata"].get("namespace", "default") not in ("default", "kube-system", "kube-public", "kube-node-lease") \
                    and not get("namespaces", None, o["metadata"]["namespace"]) and res != "namespaces":
                return 404, status(404, "NotFound", 'namespaces "%s" not found' % o["metadata"]["namespace"])
            if sub == "status":
                cur = get(res, ns, name)
                cur["status"] = o.get("status")
                return 200, put(res, cur)
            if method == "PUT":
                cur = get(res, ns, name)
                if cur and "status" in cur and "status" not in o:
                    o["status"] = cur["status"]
            if q.get("dryRun") == "All":
                # server-side dry run: admission (the webhooks above) and defaulting as for a real request, nothing stored
                return (201 if method == "POST" else 200), dry_run(res, o)
            return (201 if method == "POST" else 200), put(res, o)
        if method == "PATCH":
            cur = get(res, ns, name)
            if not cur:
                return 404, status(404, "NotFound", '%s "%s" not found' % (res, name))
            merge(cur, self.body())
            return 200, put(res, cur)
        if method == "DELETE":
            options = self.body() or {}
            o = delete(res, ns, name)
            if not o:
                return 404, status(404, "NotFound", '%s "%s" not found' % (res, name))
            # the garbage collector: dependents go too unless DeleteOptions.propagationPolicy is Orphan
            if res in ("daemonsets", "deployments", "jobs") and options.get("propagationPolicy") != "Orphan":
                for p in objs("pods", ns):
                    if (p["metadata"].get("ownerReferences") or [{}])[0].get("uid") == o["metadata"]["uid"]:
                        delete("pods", ns, p["metadata"]["name"])
            if res == "namespaces":
                for k in [k for k in store.S["objects"] if k.split("/")[1] == name]:
                    store.S["objects"].pop(k)
            return 200, o
        return 405, status(405, "MethodNotAllowed", "method not allowed")

    def csr(self, o, requester):
        spec = o.get("spec") or {}
        pem = emu.unb64(spec.get("request", ""))
        cn, orgs = emu.csr_subject(pem)
        if not cn.startswith("system:node:") or "system:nodes" not in orgs:
            return 403, status(403, "Forbidden", "CSR subject not allowed")
        cert = emu.sign_csr(pem, emu.read(PKI + "/ca.crt"), emu.read(PKI + "/ca.key"), days=365)
        o.setdefault("metadata", {}).setdefault("name", "csr-" + hashlib.sha256(pem.encode()).hexdigest()[:5])
        o["spec"]["username"] = requester
        o["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "AutoApproved",
                                       "message": "Auto approving kubelet client certificate after SubjectAccessReview."}],
                       "certificate": emu.b64(cert)}
        return 201, put("certificatesigningrequests", o)

    def heartbeat(self, node, h):
        h["time"] = time.time()
        store.S["heartbeats"][node] = h
        n = get("nodes", None, node)
        if not n:
            labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                      "kubernetes.io/hostname": node, "kubernetes.io/os": "linux"}
            n = {"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": node, "labels": labels,
                              "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                              "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                                              "kubeadm.alpha.kubernetes.io/cri-socket": h.get("criSocket", "")}},
                 "spec": {}}
            pend = store.S["cluster"].get("pendingNodes", {}).pop(node, None)
            if pend:
                n["metadata"]["labels"].update(pend.get("labels", {}))
                if pend.get("taints"):
                    n["spec"]["taints"] = pend["taints"]
            sub = store.S["cluster"].get("podSubnet")
            if sub:
                idx = store.S["cluster"].setdefault("nextNodeIndex", 0)
                store.S["cluster"]["nextNodeIndex"] = idx + 1
                import ipaddress
                net = ipaddress.ip_network(sub, strict=False)
                n["spec"]["podCIDR"] = str(list(net.subnets(new_prefix=max(24, net.prefixlen)))[idx % 256])
                n["spec"]["podCIDRs"] = [n["spec"]["podCIDR"]]
            put("nodes", n)
        reconcile()
        cni = {}
        rt = h.get("runtime") or {}
        if rt.get("up") and rt.get("canRun"):
            for p in objs("pods"):
                if p["spec"].get("nodeName") != node:
                    continue
                k = pod_kind(p)
                if k == "flannel":
                    conf = flannel_conf(p["metadata"]["namespace"])
                    if conf:
                        cni["10-flannel.conflist"] = conf
                elif k == "calico":
                    cni[CNI["calico"][0]] = CNI["calico"][1]
        return 200, {"cni": cni, "node": n["metadata"]["name"], **gpu_pods(node, h)}


for m in ("GET", "POST", "PUT", "PATCH", "DELETE"):
    setattr(Handler, "do_" + m, (lambda mm: lambda self: self.handle_any(mm))(m))


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, ctx, handler=None):
        super().__init__(addr, handler or Handler)
        self.ctx = ctx

    def get_request(self):
        sock, addr = super().get_request()
        sock.settimeout(30)
        try:
            return self.ctx.wrap_socket(sock, server_side=True), addr
        except (ssl.SSLError, OSError):
            sock.close()
            raise OSError("handshake failed")

    def handle_error(self, request, client_address):
        pass


def etcd_reachable():
    """This API server's etcd (its own member) serves: not removed, and a majority of the voting members answers."""
    st = store.load_state()
    if etcd_member.removed(st):
        return False
    if not etcd_member.clustered(st):
        return True
    try:
        etcd_member.leader(st)
        return True
    except etcd_member.Unavailable:
        return False


PEER = etcd_member.Peer(lambda m, p, w, b: Handler.run_local(Handler.__new__(Handler), m, p, w, b),
                        store.load_state, store.store_state, LOCK)


def idle_listener(port):
    """etcd (2379/2380), controller-manager (10257) and scheduler (10259) ports are held like the real ones."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("0.0.0.0" if port in (2379, 2380) else "127.0.0.1", port))
        s.listen(8)
    except OSError:
        return
    threading.Thread(target=lambda: [c.close() for c, _ in iter(s.accept, None)], daemon=True).start()
