# The emulated kube-apiserver's object store ("etcd"): the one state S (load() refills it in place: other modules reach
# it as apiserver_store.S, never a copy), the resource table RES (CRDs join it), keys, uids, put/delete/dry-run, the
# kubelets' heartbeats, and the pure queries on stored objects (label and field selectors, JSON merge patch).
# Installed with bin/kube-apiserver (the kubelet package) as /usr/lib/gpuctl-emu/apiserver_store.py.
import copy, hashlib, threading, time
import emu
import kubeupgrade

# the version of the image its static pod manifest names (kubeadm upgrade apply rewrites it)
VERSION = kubeupgrade.manifest_version("@K8S_VERSION@")
STATE_FILE = "/var/lib/etcd/gpuctl-emu/state.json"
PKI = "/etc/kubernetes/pki"
LOCK = threading.RLock()
HB_GRACE = 40
S = {}

# kind registry: resource -> (groupVersion, kind, namespaced)
RES = {
    "namespaces": ("v1", "Namespace", False), "nodes": ("v1", "Node", False), "pods": ("v1", "Pod", True),
    "services": ("v1", "Service", True), "configmaps": ("v1", "ConfigMap", True), "secrets": ("v1", "Secret", True),
    "serviceaccounts": ("v1", "ServiceAccount", True), "events": ("v1", "Event", True),
    "endpoints": ("v1", "Endpoints", True), "persistentvolumes": ("v1", "PersistentVolume", False),
    "persistentvolumeclaims": ("v1", "PersistentVolumeClaim", True),
    "daemonsets": ("apps/v1", "DaemonSet", True), "deployments": ("apps/v1", "Deployment", True),
    "replicasets": ("apps/v1", "ReplicaSet", True), "statefulsets": ("apps/v1", "StatefulSet", True),
    "jobs": ("batch/v1", "Job", True), "cronjobs": ("batch/v1", "CronJob", True),
    "clusterroles": ("rbac.authorization.k8s.io/v1", "ClusterRole", False),
    "clusterrolebindings": ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", False),
    "roles": ("rbac.authorization.k8s.io/v1", "Role", True), "rolebindings": ("rbac.authorization.k8s.io/v1", "RoleBinding", True),
    "certificatesigningrequests": ("certificates.k8s.io/v1", "CertificateSigningRequest", False),
    "runtimeclasses": ("node.k8s.io/v1", "RuntimeClass", False),
    "priorityclasses": ("scheduling.k8s.io/v1", "PriorityClass", False),
    "customresourcedefinitions": ("apiextensions.k8s.io/v1", "CustomResourceDefinition", False),
    "leases": ("coordination.k8s.io/v1", "Lease", True),
    "poddisruptionbudgets": ("policy/v1", "PodDisruptionBudget", True),
    "mutatingwebhookconfigurations": ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", False),
    "validatingwebhookconfigurations": ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", False),
    "apiservices": ("apiregistration.k8s.io/v1", "APIService", False),
}


class Store:
    """The state as kueue.py's controller sees it."""
    objs = staticmethod(lambda res, ns=None: objs(res, ns))
    get = staticmethod(lambda res, ns, name: get(res, ns, name))
    put = staticmethod(lambda res, obj: put(res, obj))
    delete = staticmethod(lambda res, ns, name: delete(res, ns, name))
    now = staticmethod(time.time)


def status(code, reason, msg, details=None):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": msg,
            "reason": reason, "details": details or {}, "code": code}


def load():
    st = emu.read_json(STATE_FILE) or {}
    st.setdefault("objects", {})
    st.setdefault("heartbeats", {})
    st.setdefault("cluster", {})
    st.setdefault("rv", 1)
    S.clear()
    S.update(st)


def save():
    emu.write_json(STATE_FILE, S, 0o600)


def key(res, ns, name):
    return "%s/%s/%s" % (res, ns or "", name)


def objs(res, ns=None):
    pre = res + "/"
    out = []
    for k, o in S["objects"].items():
        if k.startswith(pre) and (ns is None or k.split("/")[1] == ns):
            out.append(o)
    return sorted(out, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))


def get(res, ns, name):
    return S["objects"].get(key(res, ns, name))


def uid(seed):
    h = hashlib.sha256(seed.encode()).hexdigest()
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:32])


def put(res, obj, create=False):
    md = obj.setdefault("metadata", {})
    gv, kind, namespaced = RES.get(res, (obj.get("apiVersion", "v1"), obj.get("kind", ""), True))
    obj.setdefault("apiVersion", gv)
    obj.setdefault("kind", kind)
    ns = md.get("namespace") if namespaced else None
    if namespaced and not ns:
        ns = md["namespace"] = "default"
    k = key(res, ns, md["name"])
    old = S["objects"].get(k)
    S["rv"] += 1
    md["resourceVersion"] = str(S["rv"])
    if old:
        md["uid"] = old["metadata"]["uid"]
        md["creationTimestamp"] = old["metadata"]["creationTimestamp"]
        md["generation"] = old["metadata"].get("generation", 1) + (1 if old.get("spec") != obj.get("spec") else 0)
    else:
        md.setdefault("uid", uid(k + str(time.time())))
        md.setdefault("creationTimestamp", emu.rfc3339(time.time()))
        md["generation"] = 1
    S["objects"][k] = obj
    return obj


def dry_run(res, obj):
    """What put() would answer for obj, without storing it or moving the resourceVersion (?dryRun=All)."""
    saved_rv, saved = S["rv"], dict(S["objects"])
    try:
        return put(res, copy.deepcopy(obj))
    finally:
        S["rv"] = saved_rv
        S["objects"].clear()
        S["objects"].update(saved)


def delete(res, ns, name):
    return S["objects"].pop(key(res, ns, name), None)

def hb(node):
    return S["heartbeats"].get(node) or {}


def selector_match(labels, sel):
    for term in [t.strip() for t in sel.split(",") if t.strip()]:
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k.strip()) == v.strip(): return False
        elif "=" in term:
            k, v = term.replace("==", "=").split("=", 1)
            if labels.get(k.strip()) != v.strip(): return False
        elif term.startswith("!"):
            if term[1:] in labels: return False
        elif term not in labels:
            return False
    return True


def field_match(obj, sel):
    for term in [t.strip() for t in sel.split(",") if t.strip()]:
        k, _, v = term.replace("==", "=").partition("=")
        cur = obj
        for part in k.split("."):
            cur = (cur or {}).get(part) if isinstance(cur, dict) else None
        if str(cur or "") != v:
            return False
    return True


def merge(dst, patch):
    for k, v in (patch or {}).items():
        if v is None:
            dst.pop(k, None)
        elif isinstance(v, dict) and isinstance(dst.get(k), dict):
            merge(dst[k], v)
        else:
            dst[k] = v


def load_state():
    return emu.read_json(STATE_FILE) or {}


def store_state(st):
    emu.write_json(STATE_FILE, st, 0o600)
