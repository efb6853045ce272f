# kubectl cordon / uncordon / drain (kubectl/pkg/cmd/drain and k8s.io/kubectl/pkg/drain), and the API server's side
# of a drain: the pods/eviction subresource with PodDisruptionBudgets (policy/v1), and the unschedulable taint that
# the node lifecycle controller keeps in step with spec.unschedulable.
# The kubectl part talks to the API server only through the kubectl emulator's context (ctx.req); the server part
# works on the emulated store through the functions the API server passes in.
import sys
import time

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
PDB_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."


# ------------------------------------------------------------------ API server side
def owner_of(pod):
    refs = pod["metadata"].get("ownerReferences") or []
    return next((r for r in refs if r.get("controller")), refs[0] if refs else None)


def node_taints(node):
    """The taints a node has, with node.kubernetes.io/unschedulable:NoSchedule exactly while spec.unschedulable."""
    taints = [t for t in (node.get("spec", {}).get("taints") or []) if t.get("key") != UNSCHEDULABLE_TAINT]
    if node.get("spec", {}).get("unschedulable"):
        taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"})
    return taints


def _selected(pdb, pod):
    sel = (pdb.get("spec") or {}).get("selector") or {}
    labels = pod["metadata"].get("labels") or {}
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        op, k, vals = e.get("operator"), e.get("key"), e.get("values") or []
        if op == "In" and labels.get(k) not in vals: return False
        if op == "NotIn" and labels.get(k) in vals: return False
        if op == "Exists" and k not in labels: return False
        if op == "DoesNotExist" and k in labels: return False
    return bool(sel)


def _count(value, expected):
    s = str(value)
    if s.endswith("%"):
        return -(-int(s[:-1]) * expected // 100)  # percentages round up, as the disruption controller does
    return int(s)


def disruptions_allowed(pdb, pods):
    """status.disruptionsAllowed as the disruption controller computes it: healthy (Running and Ready) pods the budget
    selects, less what minAvailable keeps, or maxUnavailable less those already unavailable."""
    chosen = [p for p in pods if _selected(pdb, p) and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    healthy = sum(1 for p in chosen if (p.get("status") or {}).get("phase") == "Running"
                  and all(c.get("ready") for c in (p.get("status") or {}).get("containerStatuses") or [{}]))
    spec = pdb.get("spec") or {}
    expected = len(chosen)
    if spec.get("maxUnavailable") is not None:
        desired = expected - _count(spec["maxUnavailable"], expected)
    else:
        desired = _count(spec.get("minAvailable", 1), expected)
    return max(0, healthy - max(0, desired)), healthy, desired, expected


def evict(pod, pdbs, pods, delete, status):
    """POST pods/NAME/eviction: (code, body). Refused with 429 while a PodDisruptionBudget that selects the pod allows
    no disruption; else the pod is deleted, as the eviction API does."""
    if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
        for pdb in pdbs:
            if pdb["metadata"].get("namespace") != pod["metadata"].get("namespace") or not _selected(pdb, pod):
                continue
            allowed, healthy, desired, expected = disruptions_allowed(pdb, pods)
            if allowed < 1:
                return 429, status(429, "TooManyRequests", PDB_MESSAGE, {"causes": [{
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget %s needs %d healthy pods and has %d currently"
                               % (pdb["metadata"]["name"], desired, healthy)}]})
    delete(pod)
    return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


# ------------------------------------------------------------------ kubectl side
def _opt(args, name, flag=False, default=None):
    for i, a in enumerate(list(args)):
        if a == name:
            if flag:
                args.pop(i)
                return "true"
            if i + 1 < len(args):
                v = args[i + 1]
                del args[i:i + 2]
                return v
        if a.startswith(name + "="):
            args.pop(i)
            return a.split("=", 1)[1]
    return default


def _bool(v, name, Err):
    if v is None:
        return False
    if v in ("true", "1", "t", "True"):
        return True
    if v in ("false", "0", "f", "False"):
        return False
    raise Err('error: invalid argument "%s" for "%s" flag: strconv.ParseBool: parsing "%s": invalid syntax' % (v, name, v))


def duration(v, name, Err):
    """A Go duration ("0s", "90s", "5m", "1h30m"); a bare 0 is 0s."""
    import re
    if v in (None, "0"):
        return 0.0
    m = re.fullmatch(r"((\d+(\.\d+)?)(h|m|s|ms))+", v)
    if not m:
        raise Err('error: invalid argument "%s" for "%s" flag: time: invalid duration "%s"' % (v, name, v))
    total = 0.0
    for num, _, unit in re.findall(r"(\d+(\.\d+)?)(ms|h|m|s)", v):
        total += float(num) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[unit]
    return total


def _dry(args, Err):
    v = _opt(args, "--dry-run")
    if v is None:
        return "none"
    if v not in ("none", "client", "server"):
        raise Err('error: Invalid dry-run value (%s). Must be "none", "server", or "client".' % v)
    return v


def _suffix(dry):
    return {"client": " (dry run)", "server": " (server dry run)"}.get(dry, "")


def _set_unschedulable(ctx, name, want, dry, out):
    node = ctx.req("GET", "/api/v1/nodes/" + name)
    verb = "cordoned" if want else "uncordoned"
    if bool(node.get("spec", {}).get("unschedulable")) == want:
        print("node/%s already %s%s" % (name, verb, _suffix(dry)), file=out)
        return
    if dry == "none":
        # the patch kubectl sends: a two-way merge of the old and the new node (false is omitted: null deletes it)
        ctx.req("PATCH", "/api/v1/nodes/" + name, {"spec": {"unschedulable": True if want else None}})
    print("node/%s %s%s" % (name, verb, _suffix(dry)), file=out)


def _nodes(ctx, args, Err):
    sel = _opt(args, "--selector") or _opt(args, "-l")
    if sel:
        lst = ctx.req("GET", "/api/v1/nodes?labelSelector=" + sel)
        names = [n["metadata"]["name"] for n in lst.get("items") or []]
        if not names:
            print("No resources found", file=sys.stderr)
        return names + args
    if not args:
        raise Err("error: resource(s) were provided, but no name was specified")
    return [a.split("/", 1)[1] if a.startswith(("node/", "nodes/")) else a for a in args]


def cmd_cordon(ctx, args, Err, want=True):
    dry = _dry(args, Err)
    for name in _nodes(ctx, args, Err):
        _set_unschedulable(ctx, name, want, dry, sys.stdout)
    return 0


def cmd_uncordon(ctx, args, Err):
    return cmd_cordon(ctx, args, Err, want=False)


def _filters(pod, o, Err):
    """k8s.io/kubectl/pkg/drain filters: (delete?, warning kind or None, error kind or None)."""
    md = pod["metadata"]
    if (md.get("annotations") or {}).get("kubernetes.io/config.mirror"):
        return False, None, None
    phase = (pod.get("status") or {}).get("phase")
    if md.get("deletionTimestamp") and o["skip_wait"] and time.time() - _ts(md["deletionTimestamp"]) > o["skip_wait"]:
        return False, "skip", None
    owner = owner_of(pod)
    if owner and owner.get("kind") == "DaemonSet":
        if phase in ("Succeeded", "Failed"):
            return True, None, None
        return (False, "daemonset", None) if o["ignore_ds"] else (False, None, "daemonset")
    if not owner and phase not in ("Succeeded", "Failed"):
        if not o["force"]:
            return False, None, "unreplicated"
        warn = "unreplicated"
    else:
        warn = None
    if any("emptyDir" in v for v in pod["spec"].get("volumes") or []) and phase not in ("Succeeded", "Failed"):
        if not o["emptydir"]:
            return False, None, "localstorage"
        warn = warn or "localstorage"
    return True, warn, None


def _ts(s):
    import calendar
    return calendar.timegm(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S"))


ERRORS = {"daemonset": "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)",
          "unreplicated": "cannot delete Pods declare no controller (use --force to override)",
          "localstorage": "cannot delete Pods with local storage (use --delete-emptydir-data to override)"}
WARNINGS = {"daemonset": "ignoring DaemonSet-managed Pods", "unreplicated": "deleting Pods that declare no controller",
            "localstorage": "deleting Pods with local storage", "skip": "skipping pods with deletion timestamps"}


def _pods_on(ctx, node, selector):
    q = "fieldSelector=spec.nodeName=" + node + ("&labelSelector=" + selector if selector else "")
    return ctx.req("GET", "/api/v1/pods?" + q).get("items") or []


def _drain_one(ctx, node, o, Err):
    """Returns None when drained, else the error text."""
    pods = _pods_on(ctx, node, o["selector"])
    errs, warns, chosen = {}, {}, []
    for p in pods:
        ok, warn, err = _filters(p, o, Err)
        ref = "%s/%s" % (p["metadata"]["namespace"], p["metadata"]["name"])
        if err:
            errs.setdefault(err, []).append(ref)
        if warn:
            warns.setdefault(warn, []).append(ref)
        if ok:
            chosen.append(p)
    if errs:
        return ["%s: %s" % (ERRORS[k], ", ".join(v)) for k, v in errs.items()]
    for k, v in warns.items():
        print("Warning: %s: %s" % (WARNINGS[k], ", ".join(v)), file=sys.stderr)
    if o["dry"] != "none":
        for p in chosen:
            print("evicting pod %s/%s%s" % (p["metadata"]["namespace"], p["metadata"]["name"], _suffix(o["dry"])))
        return None
    deadline = time.time() + o["timeout"] if o["timeout"] else None
    failures = []
    pending = list(chosen)
    for p in pending:
        ns, name = p["metadata"]["namespace"], p["metadata"]["name"]
        path = "/api/v1/namespaces/%s/pods/%s" % (ns, name)
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": ns}}
        if o["grace"] >= 0:
            body["deleteOptions"] = {"gracePeriodSeconds": o["grace"]}
        if o["disable_eviction"]:
            try:
                ctx.req("DELETE", path, body.get("deleteOptions"))
            except Err as e:
                if "NotFound" not in str(e):
                    failures.append("error when deleting pods/%s -n %s: %s" % (name, ns, str(e).split(": ", 1)[-1]))
                    continue
            print("pod/%s deleted" % name)
            continue
        print("evicting pod %s/%s" % (ns, name))
        while True:
            try:
                ctx.req("POST", path + "/eviction", body)
                print("pod/%s evicted" % name)
                break
            except Err as e:
                text = str(e)
                if "NotFound" in text:
                    print("pod/%s evicted" % name)
                    break
                msg = text.split(": ", 1)[-1] if text.startswith("Error from server") else text
                if "TooManyRequests" not in text:
                    failures.append('error when evicting pods/"%s" -n "%s": %s' % (name, ns, msg))
                    break
                if deadline and time.time() + 5 > deadline:
                    failures.append('error when evicting pods/"%s" -n "%s": global timeout reached: %s'
                                    % (name, ns, o["timeout_text"]))
                    break
                print('error when evicting pods/"%s" -n "%s" (will retry after 5s): %s' % (name, ns, msg), file=sys.stderr)
                time.sleep(5)
    return failures or None


def cmd_drain(ctx, args, Err):
    o = {"ignore_ds": _bool(_opt(args, "--ignore-daemonsets", flag=True), "ignore-daemonsets", Err),
         "emptydir": _bool(_opt(args, "--delete-emptydir-data", flag=True), "delete-emptydir-data", Err)
         or _bool(_opt(args, "--delete-local-data", flag=True), "delete-local-data", Err),
         "force": _bool(_opt(args, "--force", flag=True), "force", Err),
         "disable_eviction": _bool(_opt(args, "--disable-eviction", flag=True), "disable-eviction", Err),
         "selector": _opt(args, "--pod-selector"),
         "grace": int(_opt(args, "--grace-period", default="-1")),
         "dry": _dry(args, Err)}
    t = _opt(args, "--timeout", default="0s")
    o["timeout"], o["timeout_text"] = duration(t, "timeout", Err), t
    o["skip_wait"] = duration(_opt(args, "--skip-wait-for-delete-timeout", default="0"), "skip-wait-for-delete-timeout", Err)
    _opt(args, "--chunk-size")
    rc = 0
    for node in _nodes(ctx, args, Err):
        _set_unschedulable(ctx, node, True, o["dry"], sys.stdout)
        failed = _drain_one(ctx, node, o, Err)
        if failed:
            agg = failed[0] if len(failed) == 1 else "[%s]" % ", ".join(failed)
            print('error: unable to drain node "%s" due to error: %s, continuing command...' % (node, agg),
                  file=sys.stderr)
            print("There are pending nodes to be drained:\n %s" % node, file=sys.stderr)
            for f in failed:
                print(f, file=sys.stderr)
            rc = 1
            continue
        print("node/%s drained%s" % (node, _suffix(o["dry"])))
    return rc
