# The emulated kube-apiserver's controllers, run before every request (reconcile()): token cleaner and bootstrap
# signer, node status from the kubelets' heartbeats, DaemonSets, Deployments, Jobs (with Kueue's controller,
# kueue.py) and bare pods (apiserver_pods.py).
import copy, hashlib, json, time
import emu
import kueue
import mig
import nodedrain
import apiserver_store as store
from apiserver_store import Store, delete, get, hb, objs, put
from apiserver_pods import node_matches, node_taints_tolerated, plugin_config, pod_kind, reconcile_pod, sharing_replicas, unhealthy_gpus

def tokens():
    out = {}
    for s in objs("secrets", "kube-system"):
        if s.get("type") != "bootstrap.kubernetes.io/token":
            continue
        d = {k: emu.unb64(v) for k, v in (s.get("data") or {}).items()}
        d.update(s.get("stringData") or {})
        if "token-id" in d and "token-secret" in d:
            out[d["token-id"]] = (s, d)
    return out


def token_controllers():
    """tokencleaner + bootstrapsigner"""
    changed = False
    for tid, (s, d) in list(tokens().items()):
        exp = d.get("expiration")
        if exp and emu.parse_rfc3339(exp) <= time.time():
            delete("secrets", "kube-system", s["metadata"]["name"])
            for o in objs("secrets", "kube-system"):  # the garbage collector: kubeadm-certs is owned by its token
                if any(r.get("uid") == s["metadata"].get("uid") for r in o["metadata"].get("ownerReferences") or []):
                    delete("secrets", "kube-system", o["metadata"]["name"])
            changed = True
    ci = get("configmaps", "kube-public", "cluster-info")
    if ci:
        data = ci.setdefault("data", {})
        want = {"jws-kubeconfig-" + tid: emu.jws_detached(data.get("kubeconfig", ""), tid, d["token-secret"])
                for tid, (s, d) in tokens().items() if d.get("usage-bootstrap-signing") == "true"}
        have = {k: v for k, v in data.items() if k.startswith("jws-kubeconfig-")}
        if want != have:
            for k in have:
                data.pop(k)
            data.update(want)
            put("configmaps", ci)
            changed = True
    return changed


def pod_name(base, seed):
    h = hashlib.sha256(seed.encode()).hexdigest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    n = int(h, 16)
    return base + "-" + "".join(alphabet[(n >> (5 * i)) % len(alphabet)] for i in range(5))


def new_pod(owner, kind, template, ns, name, node=None):
    tpl = copy.deepcopy(template)
    md = tpl.get("metadata") or {}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "labels": md.get("labels") or {},
                        "annotations": md.get("annotations") or {},
                        "ownerReferences": [{"apiVersion": owner["apiVersion"], "kind": kind, "name": owner["metadata"]["name"],
                                             "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
           "spec": tpl.get("spec") or {}}
    pod["spec"].setdefault("restartPolicy", "Always")
    if node:
        pod["spec"]["nodeName"] = node
        pod["metadata"]["annotations"]["gpuctl-emu/scheduled"] = str(time.time())
    return put("pods", pod)


def reconcile():
    token_controllers()
    kueue.register_crds(store.RES, objs("customresourcedefinitions"))
    nodes = objs("nodes")
    # nodes: status from the kubelet's last heartbeat
    for n in nodes:
        name = n["metadata"]["name"]
        h = hb(name)
        st = n.setdefault("status", {})
        fresh = h and time.time() - h.get("time", 0) <= store.HB_GRACE
        rt = h.get("runtime") or {}
        lt = emu.rfc3339(h.get("time", time.time()))
        if not fresh:
            ready = {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "message": "Kubelet stopped posting node status."}
        elif not rt.get("up"):
            ready = {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                     "message": "container runtime is down, PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s"}
        elif not h.get("cni"):
            ready = {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                     "message": "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"}
        else:
            ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}
        ready.update(lastHeartbeatTime=lt, lastTransitionTime=lt)
        conds = [{"type": t, "status": "False" if fresh else "Unknown", "reason": r if fresh else "NodeStatusUnknown",
                  "message": m if fresh else "Kubelet stopped posting node status.", "lastHeartbeatTime": lt, "lastTransitionTime": lt}
                 for t, r, m in (("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                                 ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                                 ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"))]
        st["conditions"] = conds + [ready]
        if h.get("address"):
            st["addresses"] = [{"type": "InternalIP", "address": h["address"]}, {"type": "Hostname", "address": name}]
        cap = {"cpu": str(h.get("cpu", 2)), "memory": "%dKi" % h.get("memKi", 16 * 1024 * 1024), "pods": "110",
               "ephemeral-storage": "61202244Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
        dp = [p for p in objs("pods") if p["spec"].get("nodeName") == name and pod_kind(p) == "device-plugin"
              and (p.get("status") or {}).get("containerStatuses") and p["status"]["containerStatuses"][0].get("ready")]
        if dp and h.get("gpus"):
            cfg, err = plugin_config(dp[0], name)
            cap["nvidia.com/gpu"] = str(h["gpus"] * (1 if err else sharing_replicas(cfg)))
            res, _ = (None, None) if err else mig.plugin_resources(h["gpus"], h.get("migEnabledGpus") or 0, h.get("migDevices") or [], cfg)
            cap.update(res or {})
        st["capacity"] = cap
        st["allocatable"] = dict(cap)
        if dp and h.get("gpus") and "nvidia.com/gpu" in cap:
            # the kubelet counts the plugin's unhealthy devices in capacity, not in allocatable
            dp_started = float(dp[0]["metadata"].get("annotations", {}).get("gpuctl-emu/scheduled") or
                               emu.parse_rfc3339(dp[0]["metadata"]["creationTimestamp"]))
            bad = min(len(unhealthy_gpus(h, dp_started)), h["gpus"])
            if bad:
                per = int(cap["nvidia.com/gpu"]) // h["gpus"]
                st["allocatable"]["nvidia.com/gpu"] = str(int(cap["nvidia.com/gpu"]) - bad * per)
        st["nodeInfo"] = {"machineID": h.get("machineID", ""), "systemUUID": h.get("machineID", ""), "bootID": h.get("bootID", ""),
                          "kernelVersion": h.get("kernel", ""), "osImage": h.get("osImage", ""),
                          "containerRuntimeVersion": "%s://%s" % (rt.get("runtimeName", "containerd"), (rt.get("runtimeVersion") or "").lstrip("v")),
                          "kubeletVersion": h.get("kubeletVersion", "v" + store.VERSION), "kubeProxyVersion": "",
                          "operatingSystem": "linux", "architecture": "amd64"}
        st["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
        taints = [t for t in nodedrain.node_taints(n) if not t["key"].startswith("node.kubernetes.io/not-ready")]
        if ready["status"] != "True":
            taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
        n["spec"]["taints"] = taints or None
        if n["spec"]["taints"] is None:
            del n["spec"]["taints"]
    # daemonsets
    live = set()
    for ds in objs("daemonsets"):
        ns = ds["metadata"]["namespace"]
        tpl = ds["spec"].get("template") or {}
        spec = tpl.get("spec") or {}
        desired = []
        for n in nodes:
            if node_matches(n, spec) and node_taints_tolerated(n, spec.get("tolerations"), daemon=True):
                desired.append(n["metadata"]["name"])
        pods = [p for p in objs("pods", ns) if (p["metadata"].get("ownerReferences") or [{}])[0].get("uid") == ds["metadata"]["uid"]]
        gen = str(ds["metadata"].get("generation", 1))
        have = {p["spec"].get("nodeName"): p for p in pods}
        for p in pods:
            # RollingUpdate: a pod of an older template generation is replaced (the real controller does it one node
            # at a time, bounded by maxUnavailable; here at once)
            old_gen = (p["metadata"].get("labels") or {}).get("pod-template-generation")
            if p["spec"].get("nodeName") not in desired or (old_gen is not None and old_gen != gen):
                delete("pods", ns, p["metadata"]["name"])
                have.pop(p["spec"].get("nodeName"), None)
        for nn in desired:
            if nn not in have:
                tpl_gen = copy.deepcopy(tpl)
                tpl_gen.setdefault("metadata", {}).setdefault("labels", {})["pod-template-generation"] = gen
                have[nn] = new_pod(ds, "DaemonSet", tpl_gen, ns, pod_name(ds["metadata"]["name"], nn + ds["metadata"]["uid"] + str(time.time())), nn)
        ready = 0
        for nn in desired:
            reconcile_pod(have[nn])
            if all(c.get("ready") for c in have[nn]["status"].get("containerStatuses") or [{}]):
                ready += 1
        ds["status"] = {"currentNumberScheduled": len(desired), "desiredNumberScheduled": len(desired),
                        "numberMisscheduled": 0, "numberReady": ready, "numberAvailable": ready,
                        "updatedNumberScheduled": len(desired), "observedGeneration": ds["metadata"].get("generation", 1)}
        if len(desired) - ready:
            ds["status"]["numberUnavailable"] = len(desired) - ready
    # deployments (one ReplicaSet's worth of pods, owned directly)
    for d in objs("deployments"):
        ns = d["metadata"]["namespace"]
        want = int(d["spec"].get("replicas", 1))
        tpl = d["spec"].get("template") or {}
        pods = [p for p in objs("pods", ns) if (p["metadata"].get("ownerReferences") or [{}])[0].get("uid") == d["metadata"]["uid"]]
        h = hashlib.sha256(json.dumps(tpl, sort_keys=True).encode()).hexdigest()
        alphabet = "bcdfghjklmnpqrstvwxz2456789"
        rsh = "".join(alphabet[int(h[i:i + 2], 16) % len(alphabet)] for i in range(0, 20, 2))[:10]
        for p in pods[want:]:
            delete("pods", ns, p["metadata"]["name"])
        pods = pods[:want]
        while len(pods) < want:
            pods.append(new_pod(d, "Deployment", tpl, ns, pod_name("%s-%s" % (d["metadata"]["name"], rsh), str(time.time()) + str(len(pods)))))
        ready = 0
        for p in pods:
            reconcile_pod(p)
            if p["status"].get("containerStatuses") and all(c.get("ready") for c in p["status"]["containerStatuses"]):
                ready += 1
        d["status"] = {"observedGeneration": d["metadata"].get("generation", 1), "replicas": want, "updatedReplicas": want,
                       "readyReplicas": ready, "availableReplicas": ready,
                       "conditions": [{"type": "Available", "status": "True" if ready >= want else "False",
                                       "reason": "MinimumReplicasAvailable" if ready >= want else "MinimumReplicasUnavailable",
                                       "message": "Deployment has minimum availability." if ready >= want else "Deployment does not have minimum availability."}]}
        if ready < want:
            d["status"]["unavailableReplicas"] = want - ready
    # jobs
    kueue.reconcile(Store)
    for j in objs("jobs"):
        ns = j["metadata"]["namespace"]
        pods = [p for p in objs("pods", ns) if (p["metadata"].get("ownerReferences") or [{}])[0].get("uid") == j["metadata"]["uid"]]
        if kueue.job_held(j):
            # suspended: no pods; running ones are deleted without counting as failed (the job-tracking finalizer goes first)
            for p in pods:
                delete("pods", ns, p["metadata"]["name"])
            st = j.setdefault("status", {})
            st["active"] = 0
            st.pop("startTime", None)
            st["conditions"] = [c for c in st.get("conditions") or [] if c.get("type") != "Suspended"] + [
                {"type": "Suspended", "status": "True", "reason": "JobSuspended", "message": "Job suspended"}]
            continue
        if not pods:
            tpl = copy.deepcopy(j["spec"].get("template") or {})
            tpl.setdefault("metadata", {}).setdefault("labels", {})["job-name"] = j["metadata"]["name"]
            pods = [new_pod(j, "Job", tpl, ns, pod_name(j["metadata"]["name"], str(time.time())))]
        for p in pods:
            reconcile_pod(p)
        done = [p for p in pods if p["status"].get("phase") == "Succeeded"]
        active = [p for p in pods if p["status"].get("phase") in ("Pending", "Running")]
        # startTime: when the Job controller started (or, after a suspension, resumed) the Job; completionTime and the
        # conditions' lastTransitionTime: when it was first seen complete. Both are kept once set, as the controller does.
        prev = j.get("status") or {}
        j["status"] = {"active": len(active), "succeeded": len(done), "failed": 0, "ready": 0,
                       "startTime": prev.get("startTime") or emu.rfc3339(time.time())}
        if done:
            j["status"].pop("active")
            at = prev.get("completionTime") or emu.rfc3339(time.time())
            j["status"]["completionTime"] = at
            j["status"]["conditions"] = [
                {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
                 "message": "Reached expected number of succeeded pods", "lastTransitionTime": at},
                {"type": "Complete", "status": "True", "reason": "CompletionsReached",
                 "message": "Reached expected number of succeeded pods", "lastTransitionTime": at}]
    # bare pods
    for p in objs("pods"):
        if (p["metadata"].get("ownerReferences") or [{"kind": "Node"}])[0].get("kind") == "Node":
            reconcile_pod(p)
