# Emulated Kueue (kubernetes-sigs/kueue v0.14, API kueue.x-k8s.io/v1beta1) for the test bed's kube-apiserver: the
# batch/v1 Job integration (webhook: a Job with kueue.x-k8s.io/queue-name is created suspended; a Workload per Job),
# the scheduler (ClusterQueue quota per flavor, BestEffortFIFO, cohort borrowing with borrowingLimit, classical reclaim
# preemption), the Job start/stop on admission and eviction, Workload conditions and events with Kueue's own reasons and
# messages, and ClusterQueue/LocalQueue status. It runs only while the kueue-controller-manager Deployment is available,
# as the real one does; its webhooks (mjob.kb.io, vjob.kb.io) refuse Jobs, as the API server words it, while their
# configurations register them and the webhook Service has no ready endpoint.
# Written from Kueue's source (pkg/scheduler, pkg/workload, pkg/controller/jobframework, pkg/cache/scheduler).
#
# The controller works on an `api` with objs(res, ns=None), get(res, ns, name), put(res, obj), delete(res, ns, name) and
# now() (seconds), so that kueue_test.py can drive it without a server.
import copy, hashlib, re

GROUP = "kueue.x-k8s.io"
API = GROUP + "/v1beta1"
QUEUE_LABEL = GROUP + "/queue-name"
JOB_UID_LABEL = GROUP + "/job-uid"
PRIORITY_LABEL = GROUP + "/priority-class"
PODSET_LABEL = GROUP + "/podset"
STOPPING = GROUP + "/stopping"
FINALIZER = GROUP + "/resource-in-use"
NS = "kueue-system"
DEPLOYMENT = "kueue-controller-manager"
MUTATING = "kueue-mutating-webhook-configuration"
VALIDATING = "kueue-validating-webhook-configuration"


def rfc3339(t):
    import time as _t
    return _t.strftime("%Y-%m-%dT%H:%M:%SZ", _t.gmtime(t))


def parse_time(s):
    import calendar, time as _t
    return calendar.timegm(_t.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))


# ------------------------------------------------------------------ CRDs (the API server serves what they declare)
def register_crds(res_table, crds):
    """Adds each CustomResourceDefinition's plural to the API server's resource table: (group/version, kind, namespaced)."""
    for crd in crds:
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        versions = [v for v in spec.get("versions") or [] if v.get("served", True)]
        storage = [v for v in versions if v.get("storage")] or versions
        if names.get("plural") and storage:
            res_table.setdefault(names["plural"], ("%s/%s" % (spec.get("group"), storage[0]["name"]), names.get("kind"),
                                                   spec.get("scope") == "Namespaced"))


# ------------------------------------------------------------------ readiness and the Job webhook
def controller_ready(api):
    """The controller runs: its Deployment is Available with a ready replica (scaled to 0 it is Available, and no
    controller runs)."""
    d = api.get("deployments", NS, DEPLOYMENT)
    if not d:
        return False
    st = d.get("status") or {}
    return int(st.get("readyReplicas") or 0) > 0 and any(c.get("type") == "Available" and c.get("status") == "True"
                                                          for c in st.get("conditions") or [])


def pod_ready(pod):
    """A pod the endpoints controller lists as a ready address: not terminating, condition Ready True."""
    if pod["metadata"].get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or [])


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def call_webhook(api, webhook):
    """What kube-apiserver's webhook client gets when it calls {@code webhook} (an entry of a webhook configuration) by
    its clientConfig.service: None when the Service has a ready endpoint, else its error, worded as the API server's
    (webhook/errors.go, ResolveEndpoint in apiserver/pkg/util/proxy: "no endpoints available for service %q")."""
    svc_ref = (webhook.get("clientConfig") or {}).get("service") or {}
    ns, name = svc_ref.get("namespace", ""), svc_ref.get("name", "")
    url = "https://%s.%s.svc:%d%s?timeout=%ds" % (name, ns, int(svc_ref.get("port") or 443), svc_ref.get("path") or "",
                                                  int(webhook.get("timeoutSeconds") or 10))
    prefix = 'Internal error occurred: failed calling webhook "%s": failed to call webhook: Post "%s": ' % (webhook.get("name"), url)
    svc = api.get("services", ns, name)
    if not svc:
        return prefix + 'service "%s" not found' % name
    selector = (svc.get("spec") or {}).get("selector") or {}
    if not any(pod_ready(p) and selects(selector, p["metadata"].get("labels") or {}) for p in api.objs("pods", ns)):
        return prefix + 'no endpoints available for service "%s"' % name
    return None


def registered_webhook(api, res, config, name):
    """The webhook {@code name} of the stored webhook configuration {@code config} (resource {@code res}), or None."""
    c = api.get(res, None, config)
    return next((w for w in (c or {}).get("webhooks") or [] if w.get("name") == name), None)


def job_webhook(api, job):
    """The webhooks mjob.kb.io (mutating) and vjob.kb.io (validating) on a Job CREATE, each called only while its
    configuration registers it: None when the Job may be created (suspended when it names a queue), else the API
    server's error message (failurePolicy Fail: a webhook that cannot be called refuses the Job). The webhook server
    answers while the webhook Service has a ready endpoint, a ready controller pod (the Deployment's)."""
    mutating = registered_webhook(api, "mutatingwebhookconfigurations", MUTATING, "mjob.kb.io")
    if mutating:
        refused = call_webhook(api, mutating)
        if refused:
            return refused
        if (job.get("metadata", {}).get("labels") or {}).get(QUEUE_LABEL):
            job.setdefault("spec", {})["suspend"] = True
    validating = registered_webhook(api, "validatingwebhookconfigurations", VALIDATING, "vjob.kb.io")
    if validating:
        refused = call_webhook(api, validating)
        if refused:
            return refused
        labels = job.get("metadata", {}).get("labels") or {}
        if labels.get(QUEUE_LABEL) and not re.match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                                                   labels[QUEUE_LABEL]):
            return 'admission webhook "vjob.kb.io" denied the request: metadata.labels[%s]: Invalid value: "%s": a lowercase' \
                   ' RFC 1123 subdomain must consist of lower case alphanumeric characters' % (QUEUE_LABEL, labels[QUEUE_LABEL])
    return None


# ------------------------------------------------------------------ quantities
def qty(v):
    """A resource quantity in milli units (cpu "500m" -> 500, "2" -> 2000; memory "1Gi" -> 1073741824000)."""
    s = str(v)
    m = re.match(r"^([0-9.]+)([a-zA-Z]*)$", s)
    if not m:
        return 0
    n = float(m.group(1))
    mult = {"": 1, "m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
            "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50}.get(m.group(2), 1)
    return int(round(n * mult * 1000))


def qstr(milli):
    """resource.Quantity.String() for the values here: whole numbers plainly, else in milli units."""
    return str(milli // 1000) if milli % 1000 == 0 else "%dm" % milli


def pod_requests(spec):
    """Per-pod requests of a pod spec; limits count where a request is missing (UseLimitsAsMissingRequestsInPod)."""
    out = {}
    for c in spec.get("containers") or []:
        r = c.get("resources") or {}
        req = dict(r.get("limits") or {})
        req.update(r.get("requests") or {})
        for k, v in req.items():
            out[k] = out.get(k, 0) + qty(v)
    return out


# ------------------------------------------------------------------ conditions and events
def cond(obj, ctype):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def is_true(obj, ctype):
    c = cond(obj, ctype)
    return bool(c) and c.get("status") == "True"


def set_cond(api, obj, ctype, status, reason, message):
    conds = obj.setdefault("status", {}).setdefault("conditions", [])
    for c in conds:
        if c["type"] == ctype:
            if c["status"] != status:
                c["lastTransitionTime"] = rfc3339(api.now())
            c.update(status=status, reason=reason, message=message)
            return
    conds.append({"type": ctype, "status": status, "reason": reason, "message": message,
                  "lastTransitionTime": rfc3339(api.now()), "observedGeneration": obj["metadata"].get("generation", 1)})


def event(api, obj, etype, reason, message, component):
    md = obj["metadata"]
    t = api.now()
    seed = "%s/%s/%s/%s/%s" % (md.get("namespace"), md["name"], reason, message, t)
    name = "%s.%s" % (md["name"], hashlib.sha256(seed.encode()).hexdigest()[:16])
    api.put("events", {"apiVersion": "v1", "kind": "Event",
                       "metadata": {"name": name, "namespace": md.get("namespace") or "default"},
                       "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": md["name"],
                                          "namespace": md.get("namespace"), "uid": md.get("uid")},
                       "reason": reason, "message": message, "type": etype, "count": 1,
                       "source": {"component": component}, "reportingComponent": component,
                       "firstTimestamp": rfc3339(t), "lastTimestamp": rfc3339(t)})


# ------------------------------------------------------------------ the Job integration
def workload_name(job):
    name, uid = job["metadata"]["name"], job["metadata"].get("uid", "")
    h = hashlib.sha1(("Job\nbatch\n%s\n%s" % (name, uid)).encode()).hexdigest()[:5]
    return ("job-" + name)[:247] + "-" + h


def job_workload(api, job):
    for w in api.objs("workloads", job["metadata"]["namespace"]):
        if (w["metadata"].get("labels") or {}).get(JOB_UID_LABEL) == job["metadata"].get("uid"):
            return w
    return None


def priority(api, job):
    """Workload priority: the kueue.x-k8s.io/priority-class WorkloadPriorityClass, else the pod's PriorityClass, else 0."""
    labels = job["metadata"].get("labels") or {}
    if labels.get(PRIORITY_LABEL):
        wpc = api.get("workloadpriorityclasses", None, labels[PRIORITY_LABEL])
        if wpc:
            return labels[PRIORITY_LABEL], int(wpc.get("value", 0)), GROUP + "/workloadpriorityclass"
    pc_name = ((job["spec"].get("template") or {}).get("spec") or {}).get("priorityClassName")
    if pc_name:
        pc = api.get("priorityclasses", None, pc_name)
        if pc:
            return pc_name, int(pc.get("value", 0)), "scheduling.k8s.io/priorityclass"
    return "", 0, ""


def finished(job):
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return c
    return None


def create_workload(api, job, queue):
    tpl = copy.deepcopy(job["spec"].get("template") or {})
    labels = (tpl.setdefault("metadata", {}).get("labels") or {})
    for k in ("job-name", "controller-uid", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"):
        labels.pop(k, None)
    count = min(int(job["spec"].get("parallelism", 1)), int(job["spec"].get("completions", job["spec"].get("parallelism", 1))))
    pcn, prio, source = priority(api, job)
    w = {"apiVersion": API, "kind": "Workload",
         "metadata": {"name": workload_name(job), "namespace": job["metadata"]["namespace"],
                      "labels": {JOB_UID_LABEL: job["metadata"].get("uid", "")}, "finalizers": [FINALIZER],
                      "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"],
                                           "uid": job["metadata"].get("uid"), "controller": True, "blockOwnerDeletion": True}]},
         "spec": {"podSets": [{"name": "main", "count": count, "template": tpl}], "queueName": queue,
                  "priority": prio, "active": True}}
    if pcn:
        w["spec"].update(priorityClassName=pcn, priorityClassSource=source)
    w = api.put("workloads", w)
    event(api, job, "Normal", "CreatedWorkload", "Created Workload: %s/%s" % (w["metadata"]["namespace"], w["metadata"]["name"]),
          "batch/job-kueue-controller")
    return w


def reconcile_jobs(api):
    """Workloads for queued Jobs; finished, started and stopped Jobs."""
    for job in api.objs("jobs"):
        queue = (job["metadata"].get("labels") or {}).get(QUEUE_LABEL)
        if not queue:
            continue
        w = job_workload(api, job)
        if w is None:
            if int((job.get("status") or {}).get("active") or 0) > 0 or finished(job):
                continue
            w = create_workload(api, job, queue)
        done = finished(job)
        if done and not is_true(w, "Finished"):
            set_cond(api, w, "Finished", "True", "Succeeded" if done["type"] == "Complete" else "Failed",
                     done.get("message") or ("Reached expected number of succeeded pods" if done["type"] == "Complete"
                                             else "Job has reached the specified backoff limit"))
            w["metadata"]["finalizers"] = [f for f in w["metadata"].get("finalizers") or [] if f != FINALIZER]
            api.put("workloads", w)
            event(api, job, "Normal", "FinishedWorkload", "Workload '%s/%s' is declared finished"
                  % (w["metadata"]["namespace"], w["metadata"]["name"]), "batch/job-kueue-controller")
            continue
        if done:
            continue
        suspended = bool(job["spec"].get("suspend"))
        if is_true(w, "Evicted") and is_true(w, "QuotaReserved"):
            stop_job(api, job, w)
        elif is_true(w, "Admitted") and suspended:
            start_job(api, job, w)


def start_job(api, job, w):
    """startJob: the flavors' node labels into the pod template's nodeSelector, the podset label, suspend=false."""
    tpl = job["spec"].setdefault("template", {})
    spec = tpl.setdefault("spec", {})
    for psa in (w["status"].get("admission") or {}).get("podSetAssignments") or []:
        for flavor in sorted(set((psa.get("flavors") or {}).values())):
            rf = api.get("resourceflavors", None, flavor) or {}
            for k, v in ((rf.get("spec") or {}).get("nodeLabels") or {}).items():
                spec.setdefault("nodeSelector", {})[k] = v
            spec.setdefault("tolerations", [])
            spec["tolerations"] += (rf.get("spec") or {}).get("tolerations") or []
            if not spec["tolerations"]:
                del spec["tolerations"]
    tpl.setdefault("metadata", {}).setdefault("labels", {})[PODSET_LABEL] = "main"
    job["spec"]["suspend"] = False
    api.put("jobs", job)
    event(api, job, "Normal", "Started", "Admitted by clusterQueue %s" % w["status"]["admission"]["clusterQueue"],
          "batch/job-kueue-controller")


def stop_job(api, job, w):
    """An evicted workload's Job: suspended (its pods deleted by the Job controller, not counted as failed), the template
    restored from the Workload; once no pod is active, the Workload is requeued and its quota released."""
    msg = cond(w, "Evicted").get("message", "")
    if not job["spec"].get("suspend"):
        job["spec"]["suspend"] = True
        tpl = w["spec"]["podSets"][0].get("template") or {}
        job["spec"]["template"]["spec"]["nodeSelector"] = copy.deepcopy((tpl.get("spec") or {}).get("nodeSelector"))
        if job["spec"]["template"]["spec"]["nodeSelector"] is None:
            del job["spec"]["template"]["spec"]["nodeSelector"]
        job["spec"]["template"].get("metadata", {}).get("labels", {}).pop(PODSET_LABEL, None)
        api.put("jobs", job)
        event(api, job, "Normal", "Stopped", msg, "batch/job-kueue-controller")
        return
    if int((job.get("status") or {}).get("active") or 0) == 0:
        reason = cond(w, "Evicted").get("reason", "Preempted")
        set_cond(api, w, "Requeued", "True" if reason in ("Preempted", "NodeFailures") else "False", reason, msg)
        set_cond(api, w, "QuotaReserved", "False", "Pending", msg)
        set_cond(api, w, "Admitted", "False", "NoReservation", "The workload has no reservation")
        w["status"].pop("admission", None)
        api.put("workloads", w)


# ------------------------------------------------------------------ the scheduler's view of quota
def workload_usage(w):
    """{(flavor, resource): milli} a workload with a reservation holds."""
    out = {}
    for psa in (w.get("status") or {}).get("admission", {}).get("podSetAssignments") or []:
        for r, f in (psa.get("flavors") or {}).items():
            out[(f, r)] = out.get((f, r), 0) + qty((psa.get("resourceUsage") or {}).get(r, 0))
    return out


def requests(w):
    total = {}
    for ps in w["spec"].get("podSets") or []:
        for r, v in pod_requests((ps.get("template") or {}).get("spec") or {}).items():
            total[r] = total.get(r, 0) + v * int(ps.get("count", 1))
    return total


def reserving(w):
    return is_true(w, "QuotaReserved") and not is_true(w, "Finished")


def quota_table(cq):
    """{(flavor, resource): (nominal, borrowingLimit or None)} and the resource groups [(covered, [flavor names])]."""
    table, groups = {}, []
    for rg in (cq.get("spec") or {}).get("resourceGroups") or []:
        names = []
        for f in rg.get("flavors") or []:
            names.append(f["name"])
            for r in f.get("resources") or []:
                bl = r.get("borrowingLimit")
                table[(f["name"], r["name"])] = (qty(r.get("nominalQuota", 0)), None if bl is None else qty(bl))
        groups.append((rg.get("coveredResources") or [], names))
    return table, groups


class Snapshot:
    """Usage per ClusterQueue per (flavor, resource), and Kueue's Available/PotentialAvailable for a flat cohort
    without lending limits (resource_node.go): a cohort lends every queue's unused nominal quota."""

    def __init__(self, cqs, workloads, cq_of):
        self.cqs = {c["metadata"]["name"]: c for c in cqs}
        self.quota = {n: quota_table(c)[0] for n, c in self.cqs.items()}
        self.usage = {n: {} for n in self.cqs}
        for w in workloads:
            c = cq_of(w)
            if reserving(w) and c in self.usage:
                for fr, v in workload_usage(w).items():
                    self.usage[c][fr] = self.usage[c].get(fr, 0) + v

    def cohort(self, c):
        return (self.cqs[c].get("spec") or {}).get("cohort") or ""

    def members(self, c):
        co = self.cohort(c)
        return [n for n in self.cqs if co and self.cohort(n) == co] if co else [c]

    def used(self, c, fr):
        return self.usage[c].get(fr, 0)

    def add(self, c, fr, v):
        self.usage[c][fr] = self.usage[c].get(fr, 0) + v

    def available(self, c, fr):
        nominal, bl = self.quota[c].get(fr, (0, None))
        if not self.cohort(c):
            return max(0, nominal - self.used(c, fr))
        parent = sum(self.quota[m].get(fr, (0, None))[0] for m in self.members(c)) - sum(self.used(m, fr) for m in self.members(c))
        if bl is not None:
            parent = min(parent, nominal - self.used(c, fr) + bl)
        return max(0, parent)

    def potential(self, c, fr):
        nominal, bl = self.quota[c].get(fr, (0, None))
        if not self.cohort(c):
            return nominal
        subtree = sum(self.quota[m].get(fr, (0, None))[0] for m in self.members(c))
        return subtree if bl is None else min(subtree, nominal + bl)

    def borrowing(self, c, fr):
        return max(0, self.used(c, fr) - self.quota[c].get(fr, (0, None))[0])


def assign(api, snap, c, w):
    """Flavor assignment for podset main: ('fit'|'preempt'|'nofit', {resource: flavor}, message, borrows)."""
    _, groups = quota_table(snap.cqs[c])
    req = requests(w)
    selector = ((w["spec"]["podSets"][0].get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
    chosen, reasons, mode, borrows = {}, [], "fit", False
    for r in sorted(req):
        group = next(((cov, names) for cov, names in groups if r in cov), None)
        if group is None:
            return "nofit", {}, "couldn't assign flavors to pod set main: resource %s unavailable in ClusterQueue" % r, False
        keys = set()
        for f in group[1]:
            keys |= set(((api.get("resourceflavors", None, f) or {}).get("spec") or {}).get("nodeLabels") or {})
        best = None
        for f in group[1]:
            rf = api.get("resourceflavors", None, f)
            if not rf:
                reasons.append("flavor %s not found" % f)
                continue
            labels = (rf.get("spec") or {}).get("nodeLabels") or {}
            if any(k in labels and selector[k] != labels[k] for k in selector if k in keys):
                reasons.append("flavor %s doesn't match node affinity" % f)
                continue
            fr, val = (f, r), req[r]
            if val > snap.potential(c, fr):
                reasons.append("insufficient quota for %s in flavor %s, previously considered podsets requests (0) + current podset"
                               " request (%s) > maximum capacity (%s)" % (r, f, qstr(val), qstr(snap.potential(c, fr))))
                continue
            avail = snap.available(c, fr)
            if val <= avail:
                best = ("fit", f)
                break
            reasons.append("insufficient unused quota for %s in flavor %s, %s more needed" % (r, f, qstr(val - avail)))
            if best is None:
                best = ("preempt", f)
        if best is None:
            return "nofit", {}, "couldn't assign flavors to pod set main: " + ", ".join(sorted(reasons)), False
        chosen[r] = best[1]
        if best[0] == "preempt":
            mode = "preempt"
        if snap.used(c, (best[1], r)) + req[r] > snap.quota[c].get((best[1], r), (0, None))[0]:
            borrows = True
    msg = "couldn't assign flavors to pod set main: " + ", ".join(sorted(reasons)) if reasons else ""
    return mode, chosen, msg, borrows


def preemption_targets(api, snap, c, w, chosen, admitted, cq_of):
    """Classical reclaim within the cohort: admitted workloads of other queues above their nominal quota in a needed
    flavor-resource, lowest priority first, then the newest admitted; stop when the preemptor fits, then fill back."""
    req = requests(w)
    frs = [(f, r) for r, f in chosen.items()]
    policy = (snap.cqs[c].get("spec") or {}).get("preemption") or {}
    if policy.get("reclaimWithinCohort", "Never") == "Never":
        return [], ""
    within_nominal = all(snap.used(c, fr) + req[fr[1]] <= snap.quota[c].get(fr, (0, None))[0] for fr in frs)
    if not within_nominal and ((policy.get("borrowWithinCohort") or {}).get("policy", "Never") == "Never"):
        return [], ""
    mine = int(w["spec"].get("priority") or 0)
    cands = []
    for v in admitted:
        vc = cq_of(v)
        if vc == c or vc not in snap.members(c):
            continue
        use = workload_usage(v)
        if not any(fr in use and snap.borrowing(vc, fr) > 0 for fr in frs):
            continue
        vp = int(v["spec"].get("priority") or 0)
        if policy.get("reclaimWithinCohort") == "LowerPriority" and vp >= mine:
            continue
        if not within_nominal and vp >= mine:
            continue
        qr = cond(v, "QuotaReserved")
        cands.append((0 if is_true(v, "Evicted") else 1, vp, -parse_time(qr["lastTransitionTime"]) if qr else 0,
                       v["metadata"].get("uid", ""), v))
    cands.sort(key=lambda t: t[:4])

    def fits():
        return all(req[fr[1]] <= snap.available(c, fr) for fr in frs)

    targets = []
    for *_, v in cands:
        vc = cq_of(v)
        use = workload_usage(v)
        if not any(fr in use and snap.borrowing(vc, fr) > 0 for fr in frs):
            continue
        for fr, val in use.items():
            snap.add(vc, fr, -val)
        targets.append(v)
        if fits():
            break
    if not targets or not fits():
        for v in targets:
            for fr, val in workload_usage(v).items():
                snap.add(cq_of(v), fr, val)
        return [], ""
    for v in reversed(targets[:-1]):
        for fr, val in workload_usage(v).items():
            snap.add(cq_of(v), fr, val)
        if fits():
            targets.remove(v)
        else:
            for fr, val in workload_usage(v).items():
                snap.add(cq_of(v), fr, -val)
    for v in targets:
        for fr, val in workload_usage(v).items():
            snap.add(cq_of(v), fr, val)
    reason = "InCohortReclamation" if within_nominal else "InCohortReclaimWhileBorrowing"
    return targets, reason


def admit(api, c, w, chosen):
    req = requests(w)
    count = int(w["spec"]["podSets"][0].get("count", 1))
    w.setdefault("status", {})["admission"] = {"clusterQueue": c, "podSetAssignments": [
        {"name": "main", "flavors": dict(sorted(chosen.items())), "count": count,
         "resourceUsage": {r: qstr(v) for r, v in sorted(req.items())}}]}
    for prior in ("Evicted", "Preempted"):
        p = cond(w, prior)
        if p and p["status"] == "True":
            set_cond(api, w, prior, "False", "QuotaReserved", "Previously: " + p.get("message", ""))
    queued = parse_time(w["metadata"]["creationTimestamp"])
    set_cond(api, w, "QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue %s" % c)
    set_cond(api, w, "Admitted", "True", "Admitted", "The workload is admitted")
    api.put("workloads", w)
    event(api, w, "Normal", "QuotaReserved", "Quota reserved in ClusterQueue %s, wait time since queued was %ds"
          % (c, max(0, int(api.now() - queued))), "kueue-admission")
    event(api, w, "Normal", "Admitted", "Admitted by ClusterQueue %s, wait time since reservation was 0s" % c, "kueue-admission")


def pending(api, w, msg):
    c = cond(w, "QuotaReserved")
    if c and c["status"] == "False" and c.get("message") == msg:
        return
    set_cond(api, w, "QuotaReserved", "False", "Pending", msg)
    api.put("workloads", w)
    event(api, w, "Warning", "Pending", msg, "kueue-admission")


def preempt(api, victims, reason, preemptor):
    human = {"InCohortReclamation": "reclamation within the cohort",
             "InCohortReclaimWhileBorrowing": "reclamation within the cohort while borrowing"}[reason]
    job_uid = (preemptor["metadata"].get("labels") or {}).get(JOB_UID_LABEL, "")
    msg = "Preempted to accommodate a workload (UID: %s, JobUID: %s) due to %s" % (preemptor["metadata"].get("uid"), job_uid, human)
    for v in victims:
        if is_true(v, "Evicted"):
            continue
        set_cond(api, v, "Evicted", "True", "Preempted", msg)
        set_cond(api, v, "Preempted", "True", reason, msg)
        stats = v["status"].setdefault("schedulingStats", {}).setdefault("evictions", [])
        e = next((e for e in stats if e.get("reason") == "Preempted"), None)
        if e is None:
            stats.append({"reason": "Preempted", "underlyingCause": "", "count": 1})
        else:
            e["count"] += 1
        api.put("workloads", v)
        event(api, v, "Normal", "EvictedDueToPreempted", msg, "kueue-admission")
        event(api, v, "Normal", "Preempted", msg, "kueue-admission")


def order_key(w):
    return (-int(w["spec"].get("priority") or 0), w["metadata"]["creationTimestamp"], w["metadata"].get("uid", ""))


def schedule(api):
    """One scheduling cycle: per ClusterQueue its first pending workload that fits or can preempt (BestEffortFIFO: one
    that cannot fit even so is marked Pending and the next gets its turn), then the entries in Kueue's order."""
    cqs = api.objs("clusterqueues")
    lqs = {(q["metadata"]["namespace"], q["metadata"]["name"]): q for q in api.objs("localqueues")}
    workloads = [w for w in api.objs("workloads") if w["spec"].get("active", True)]

    def cq_of(w):
        adm = (w.get("status") or {}).get("admission")
        if adm:
            return adm.get("clusterQueue")
        q = lqs.get((w["metadata"]["namespace"], w["spec"].get("queueName")))
        return (q.get("spec") or {}).get("clusterQueue") if q else None

    snap = Snapshot(cqs, workloads, cq_of)
    admitted = [w for w in workloads if reserving(w)]
    entries = []
    for w in workloads:
        if reserving(w) or is_true(w, "Finished"):
            continue
        q = lqs.get((w["metadata"]["namespace"], w["spec"].get("queueName")))
        if not q:
            pending(api, w, "LocalQueue %s doesn't exist" % w["spec"].get("queueName"))
            continue
        c = (q.get("spec") or {}).get("clusterQueue")
        if c not in snap.cqs:
            pending(api, w, "ClusterQueue %s doesn't exist" % c)
            continue
        sel = (snap.cqs[c].get("spec") or {}).get("namespaceSelector")
        ns = api.get("namespaces", None, w["metadata"]["namespace"]) or {"metadata": {"labels": {}}}
        # the API server labels every namespace with its name (kubernetes.io/metadata.name, since 1.21)
        ns_labels = dict(ns["metadata"].get("labels") or {}, **{"kubernetes.io/metadata.name": w["metadata"]["namespace"]})
        if sel is None or any(ns_labels.get(k) != v for k, v in (sel.get("matchLabels") or {}).items()):
            pending(api, w, "Workload namespace doesn't match ClusterQueue selector")
            continue
        entries.append((c, w))
    heads = {}
    for c, w in sorted(entries, key=lambda e: order_key(e[1])):
        if c in heads:
            continue
        mode, chosen, msg, borrows = assign(api, snap, c, w)
        if mode == "nofit" or (mode == "preempt" and not preemption_targets(api, snap, c, w, chosen, admitted, cq_of)[0]):
            # BestEffortFIFO: parked as inadmissible, the next workload of the queue gets its turn
            pending(api, w, msg)
            continue
        heads[c] = (mode, chosen, msg, borrows, w)
    cycle = sorted(heads.items(), key=lambda e: (e[1][3], order_key(e[1][4])))
    for c, (mode, chosen, msg, borrows, w) in cycle:
        mode, chosen, msg, borrows = assign(api, snap, c, w)
        if mode == "fit":
            admit(api, c, w, chosen)
            for r, v in requests(w).items():
                snap.add(c, (chosen[r], r), v)
            continue
        if mode == "nofit":
            pending(api, w, "Workload no longer fits after processing another workload")
            continue
        targets, reason = preemption_targets(api, snap, c, w, chosen, admitted, cq_of)
        if not targets:
            pending(api, w, msg)
            continue
        preempt(api, targets, reason, w)
        pending(api, w, "%s. Pending the preemption of %d workload(s)" % (msg, len(targets)))
    update_status(api, cqs, lqs, api.objs("workloads"), cq_of)


def update_status(api, cqs, lqs, workloads, cq_of):
    for cq in cqs:
        name = cq["metadata"]["name"]
        table, groups = quota_table(cq)
        mine = [w for w in workloads if cq_of(w) == name and not is_true(w, "Finished")]
        res = [w for w in mine if reserving(w)]
        adm = [w for w in res if is_true(w, "Admitted")]
        missing = sorted({f for _, names in groups for f in names if not api.get("resourceflavors", None, f)})

        def usage(ws):
            out = []
            for _, names in groups:
                for f in names:
                    rs = []
                    for r in sorted(r for (ff, r) in table if ff == f):
                        total = sum(workload_usage(w).get((f, r), 0) for w in ws)
                        borrowed = max(0, total - table[(f, r)][0]) if (cq.get("spec") or {}).get("cohort") else 0
                        rs.append({"name": r, "total": qstr(total), "borrowed": qstr(borrowed)})
                    out.append({"name": f, "resources": rs})
            return out

        st = {"pendingWorkloads": len(mine) - len(res), "reservingWorkloads": len(res), "admittedWorkloads": len(adm),
              "flavorsReservation": usage(res), "flavorsUsage": usage(adm),
              "conditions": [{"type": "Active", "status": "False", "reason": "FlavorNotFound",
                              "message": "Can't admit new workloads: references missing ResourceFlavor(s): %s." % ",".join(missing)}
                             if missing else {"type": "Active", "status": "True", "reason": "Ready", "message": "Can admit new workloads"}]}
        old = cq.get("status") or {}
        for c in st["conditions"]:
            prev = next((p for p in old.get("conditions") or [] if p.get("type") == c["type"]), None)
            c["lastTransitionTime"] = prev["lastTransitionTime"] if prev and prev.get("status") == c["status"] else rfc3339(api.now())
        if old != st:
            cq["status"] = st
            api.put("clusterqueues", cq)
    for (ns, name), lq in lqs.items():
        mine = [w for w in workloads if w["metadata"]["namespace"] == ns and w["spec"].get("queueName") == name
                and not is_true(w, "Finished")]
        res = [w for w in mine if reserving(w)]
        exists = (lq.get("spec") or {}).get("clusterQueue") in {c["metadata"]["name"] for c in cqs}
        st = {"pendingWorkloads": len(mine) - len(res), "reservingWorkloads": len(res),
              "admittedWorkloads": len([w for w in res if is_true(w, "Admitted")]),
              "conditions": [{"type": "Active", "status": "True", "reason": "Ready", "message": "Can submit new workloads to localQueue"}
                             if exists else {"type": "Active", "status": "False", "reason": "ClusterQueueDoesNotExist",
                                             "message": "Can't submit new workloads to clusterQueue"}]}
        old = lq.get("status") or {}
        for c in st["conditions"]:
            prev = next((p for p in old.get("conditions") or [] if p.get("type") == c["type"]), None)
            c["lastTransitionTime"] = prev["lastTransitionTime"] if prev and prev.get("status") == c["status"] else rfc3339(api.now())
        if old != st:
            lq["status"] = st
            api.put("localqueues", lq)


def reconcile(api):
    """One pass of the controller: nothing while its Deployment is unavailable or the CRDs are not served."""
    if not controller_ready(api):
        return
    reconcile_jobs(api)
    schedule(api)
    reconcile_jobs(api)


def job_held(job):
    """For the Job controller: a suspended Job runs no pods (and its running ones are deleted, not counted as failed)."""
    return bool(job.get("spec", {}).get("suspend"))
