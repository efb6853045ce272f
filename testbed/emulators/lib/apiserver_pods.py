# The emulated kube-apiserver's view of pods on nodes: the scheduler (taints, node affinity, GPU resources), what each
# node's kubelet and container runtime make of a pod (status, logs, restarts, `kubectl exec`), and the NVIDIA device
# plugin's pod (its config manager, MIG strategy, Xid health). State through apiserver_store.
import hashlib, json, os, re, time
import emu
import mig
import apiserver_store as store
from apiserver_store import get, hb, objs

def node_taints_tolerated(node, tolerations, daemon=False):
    for t in (node.get("spec") or {}).get("taints") or []:
        if t.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if daemon and t["key"].startswith("node.kubernetes.io/"):
            continue
        ok = False
        for tol in tolerations or []:
            if tol.get("operator") == "Exists" and not tol.get("key"):
                ok = tol.get("effect") in (None, "", t["effect"])
            elif tol.get("key") == t["key"]:
                if tol.get("operator") == "Exists" or tol.get("value", "") == t.get("value", ""):
                    ok = tol.get("effect") in (None, "", t["effect"])
            if ok:
                break
        if not ok:
            return False
    return True


def node_matches(node, podspec):
    labels = node["metadata"].get("labels") or {}
    for k, v in (podspec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    terms = (((podspec.get("affinity") or {}).get("nodeAffinity") or {})
             .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    if terms:
        def term_ok(term):
            for e in term.get("matchExpressions") or []:
                op, k, vals = e.get("operator"), e.get("key"), e.get("values") or []
                if op == "In" and labels.get(k) not in vals: return False
                if op == "NotIn" and labels.get(k) in vals: return False
                if op == "Exists" and k not in labels: return False
                if op == "DoesNotExist" and k in labels: return False
            return True
        if not any(term_ok(t) for t in terms):
            return False
    return True


def node_ready(name):
    h = hb(name)
    if not h or time.time() - h.get("time", 0) > store.HB_GRACE:
        return None
    return bool(h.get("runtime", {}).get("up")) and bool(h.get("cni"))


def pod_kind(pod):
    img = " ".join(c.get("image", "") for c in pod["spec"].get("containers") or [])
    name = pod["metadata"]["name"]
    cmds = [(c.get("command") or [""])[0] for c in pod["spec"].get("containers") or []]
    if "k8s-device-plugin" in img and "mps-control-daemon" in cmds:
        return "generic"
    if "k8s-device-plugin" in img:
        return "device-plugin"
    if "flannel" in img:
        return "flannel"
    if "calico/node" in img or name.startswith("calico-node"):
        return "calico"
    return "generic"


CNI = {
    "flannel": ("10-flannel.conflist", None),
    "calico": ("10-calico.conflist", json.dumps({"name": "k8s-pod-network", "cniVersion": "0.3.1", "plugins": [
        {"type": "calico", "datastore_type": "kubernetes", "ipam": {"type": "calico-ipam"}, "policy": {"type": "k8s"},
         "kubernetes": {"kubeconfig": "/etc/cni/net.d/calico-kubeconfig"}},
        {"type": "portmap", "snat": True, "capabilities": {"portMappings": True}}]}, indent=2)),
}


def flannel_conf(ns):
    cm = get("configmaps", ns, "kube-flannel-cfg")
    return ((cm or {}).get("data") or {}).get("cni-conf.json")


def crash_state(started, period_ok=1.0):
    """restart count and whether it is in back-off, for a container that crashes ~1s after each start."""
    t = time.time() - started
    restarts, delay, at = 0, 10, period_ok
    while at + delay < t:
        at += delay
        restarts += 1
        delay = min(delay * 2, 300)
        at += period_ok
    return restarts


def pod_container_status(pod, state, reason=None, restarts=0, msg=None, exit_code=1):
    cs = []
    now = emu.rfc3339(time.time())
    for c in pod["spec"].get("containers") or []:
        s = {"name": c["name"], "image": c.get("image", ""), "imageID": "", "restartCount": restarts,
             "ready": state == "running", "started": state == "running"}
        if state == "running":
            s["state"] = {"running": {"startedAt": pod["metadata"]["creationTimestamp"]}}
            s["containerID"] = "containerd://" + hashlib.sha256(pod["metadata"]["uid"].encode()).hexdigest()
        elif state == "crash":
            s["state"] = {"waiting": {"reason": "CrashLoopBackOff",
                                      "message": "back-off %ds restarting failed container=%s pod=%s_%s(%s)" % (
                                          min(10 * 2 ** max(restarts - 1, 0), 300), c["name"], pod["metadata"]["name"],
                                          pod["metadata"]["namespace"], pod["metadata"]["uid"])}}
            s["lastState"] = {"terminated": {"exitCode": exit_code, "reason": "Error", "finishedAt": now}}
        elif state == "terminated":
            s["state"] = {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": now}}
        else:
            s["state"] = {"waiting": {"reason": reason or "ContainerCreating"}}
            if msg:
                s["state"]["waiting"]["message"] = msg
        cs.append(s)
    return cs


def set_pod_status(pod, node, phase, cstate, reason=None, restarts=0, msg=None, log=None, cond_msg=None):
    st = pod.setdefault("status", {})
    hbd = hb(node) if node else {}
    st["phase"] = phase
    st["hostIP"] = hbd.get("address", "")
    st["hostIPs"] = [{"ip": hbd.get("address", "")}] if hbd.get("address") else []
    host_net = pod["spec"].get("hostNetwork") or pod["metadata"]["namespace"] == "kube-system" and pod_kind(pod) != "generic"
    if phase in ("Running", "Succeeded") and node:
        st["podIP"] = hbd.get("address", "") if host_net else pod_ip(pod, node)
        st["podIPs"] = [{"ip": st["podIP"]}]
    st["qosClass"] = "BestEffort"
    st.setdefault("startTime", pod["metadata"]["creationTimestamp"])
    ready = cstate == "running"
    st["conditions"] = [
        {"type": "PodScheduled", "status": "True" if node else "False", "lastTransitionTime": pod["metadata"]["creationTimestamp"]}]
    if not node:
        st["conditions"][0].update(reason="Unschedulable", message=cond_msg or "")
    else:
        st["conditions"] += [{"type": "Initialized", "status": "True"},
                             {"type": "ContainersReady", "status": "True" if ready else "False"},
                             {"type": "Ready", "status": "True" if ready else "False"}]
    st["containerStatuses"] = pod_container_status(pod, cstate, reason, restarts, msg) if node else []
    if log is not None:
        pod.setdefault("metadata", {}).setdefault("annotations", {})
        store.S.setdefault("logs", {})[pod["metadata"]["uid"]] = log


def pod_ip(pod, node):
    cidr = (get("nodes", None, node) or {}).get("spec", {}).get("podCIDR") or "10.85.0.0/16"
    base = cidr.split("/")[0].split(".")
    n = int(hashlib.sha256(pod["metadata"]["uid"].encode()).hexdigest(), 16) % 250 + 2
    return "%s.%s.%s.%d" % (base[0], base[1], base[2], n)


def gpu_request(pod, resource="nvidia.com/gpu"):
    n = 0
    for c in pod["spec"].get("containers") or []:
        r = c.get("resources") or {}
        n += int((r.get("limits") or {}).get(resource) or (r.get("requests") or {}).get(resource) or 0)
    return n


def gpu_resources(pod):
    """The NVIDIA extended resources a pod asks for (nvidia.com/gpu, nvidia.com/mig-PROFILE)."""
    names = set()
    for c in pod["spec"].get("containers") or []:
        r = c.get("resources") or {}
        names.update(k for k in list((r.get("limits") or {})) + list((r.get("requests") or {})) if k.startswith("nvidia.com/"))
    return sorted(names)


def smi_run(pod, h):
    """A container that runs nvidia-smi (-L): what it prints in a container given the pod's GPUs, from the node's
    nvidia-smi -L (the kubelet's heartbeat), and whether it succeeded; None for any other command."""
    words = " ".join(str(w) for c in pod["spec"].get("containers") or [] for w in (c.get("command") or []) + (c.get("args") or []))
    if not re.search(r"(^|[\s/;&|])nvidia-smi(\s|$)", words):
        return None
    lines = [l for l in (h.get("smiList") or "").splitlines() if l.startswith("GPU ")]
    need = gpu_request(pod)
    if not need or not lines:
        return False, "No devices were found\n"
    return True, "\n".join(lines[:need]) + "\n"


def exec_in(pod, cmd):
    """`kubectl exec POD -- CMD`: nvidia-smi [-L] in a running container answers from the node's nvidia-smi -L (the
    kubelet's heartbeat) for the pod's GPUs, or "Failed to initialize NVML: Unknown Error" (exit 255) when the kubelet
    reports that the container lost its GPUs' device access at a daemon-reload; the bed runs no other program."""
    if not cmd:
        return {"stdout": "", "stderr": "error: you must specify at least one command for the container\n", "exitCode": 1}
    if os.path.basename(cmd[0]) != "nvidia-smi":
        return {"stdout": "", "stderr": 'OCI runtime exec failed: exec failed: unable to start container process: exec: "%s": executable file not found in $PATH: unknown\n'
                % cmd[0], "exitCode": 126}
    h = hb(pod["spec"].get("nodeName"))
    if pod["metadata"]["uid"] in (h.get("nvmlLost") or []):
        return {"stdout": "Failed to initialize NVML: Unknown Error\n", "stderr": "", "exitCode": 255}
    lines = [l for l in (h.get("smiList") or "").splitlines() if l.startswith("GPU ")]
    need = gpu_request(pod)
    if not need or not lines:
        return {"stdout": "No devices were found\n", "stderr": "", "exitCode": 6}
    return {"stdout": "\n".join(lines[:need]) + "\n", "stderr": "", "exitCode": 0}


def run_seconds(pod):
    """How long a run-to-completion pod's containers "run": N for a `sleep N` command (as written in the
    command or args, also inside `sh -c`), else 3 s. A pod that holds GPUs while it runs can be watched."""
    longest = 3
    for c in pod["spec"].get("containers") or []:
        words = " ".join(str(w) for w in (c.get("command") or []) + (c.get("args") or []))
        for m in re.finditer(r"(?:^|[\s;&|(])sleep\s+(\d+)(?=$|[\s;&|)])", words):
            longest = max(longest, int(m.group(1)))
    return longest


def schedule(pod):
    """returns (node name or None, message)."""
    nodes = objs("nodes")
    if not nodes:
        return None, "no nodes available to schedule pods"
    reasons = {}
    for n in nodes:
        name = n["metadata"]["name"]
        if node_ready(name) is not True:
            reasons.setdefault("node(s) had untolerated taint {node.kubernetes.io/not-ready: }", []).append(name); continue
        if not node_taints_tolerated(n, pod["spec"].get("tolerations")):
            t = (n["spec"].get("taints") or [{}])[0]
            reasons.setdefault("node(s) had untolerated taint {%s: %s}" % (t.get("key"), t.get("value", "")), []).append(name); continue
        if not node_matches(n, pod["spec"]):
            reasons.setdefault("node(s) didn't match Pod's node affinity/selector", []).append(name); continue
        short = None
        for res in gpu_resources(pod):
            need = gpu_request(pod, res)
            alloc = int((n.get("status") or {}).get("allocatable", {}).get(res, 0) or 0)
            used = sum(gpu_request(p, res) for p in objs("pods") if p["spec"].get("nodeName") == name
                       and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and p is not pod)
            if need and alloc - used < need:
                short = res; break
        if short:
            reasons.setdefault("Insufficient " + short, []).append(name); continue
        return name, ""
    parts = ["%d %s" % (len(v), k) for k, v in sorted(reasons.items())]
    return None, "0/%d nodes are available: %s. preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling." % (
        len(nodes), ", ".join(parts), len(nodes), len(nodes))


def gpu_pods(node, h):
    """For the kubelet's device checkpoint (gpuuse.py): the GPU pods running on node, in the order they were bound,
    each container's nvidia.com/gpu and its GPUCTL_TESTBED_* environment; and the device plugin's replicas per GPU."""
    out = []
    for p in sorted(objs("pods"), key=lambda p: float(p["metadata"].get("annotations", {}).get("gpuctl-emu/scheduled") or 0)):
        if p["spec"].get("nodeName") != node or not gpu_request(p) or (p.get("status") or {}).get("phase") != "Running":
            continue
        cs = []
        for c in p["spec"].get("containers") or []:
            r = c.get("resources") or {}
            n = int((r.get("limits") or {}).get("nvidia.com/gpu") or (r.get("requests") or {}).get("nvidia.com/gpu") or 0)
            env = {e["name"]: e.get("value") for e in c.get("env") or [] if str(e.get("name", "")).startswith("GPUCTL_TESTBED_")}
            cs.append({"name": c.get("name"), "gpus": n, "env": env})
        out.append({"uid": p["metadata"]["uid"], "containers": cs})
    alloc = int(((get("nodes", None, node) or {}).get("status") or {}).get("allocatable", {}).get("nvidia.com/gpu", 0) or 0)
    return {"gpuPods": out, "gpuReplicas": max(1, alloc // h["gpus"]) if h.get("gpus") else 1}


def reconcile_pod(pod):
    node = pod["spec"].get("nodeName")
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    if pod["metadata"].get("annotations", {}).get("kubernetes.io/config.source") == "file":
        return set_pod_status(pod, node, "Running", "running")
    if not node:
        n, msg = schedule(pod)
        if not n:
            return set_pod_status(pod, None, "Pending", "waiting", cond_msg=msg)
        pod["spec"]["nodeName"] = node = n
        pod["metadata"].setdefault("annotations", {})["gpuctl-emu/scheduled"] = str(time.time())
    h = hb(node)
    ann = pod["metadata"].setdefault("annotations", {})
    if "gpuctl-emu/scheduled" not in ann:
        # created with its nodeName: no scheduler ran (a cordon does not matter); the kubelet's admission asks the device
        # manager for the GPUs, which fails when the node's healthy, unused devices are too few
        need = gpu_request(pod)
        if need:
            alloc = int(((get("nodes", None, node) or {}).get("status") or {}).get("allocatable", {}).get("nvidia.com/gpu", 0) or 0)
            used = sum(gpu_request(p) for p in objs("pods") if p["spec"].get("nodeName") == node and p is not pod
                       and p["metadata"]["uid"] != pod["metadata"]["uid"] and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
            if alloc - used < need:
                ann["gpuctl-emu/admission"] = ("Allocate failed due to requested number of devices unavailable for nvidia.com/gpu."
                                               " Requested: %d, Available: %d, which is unexpected" % (need, max(0, alloc - used)))
        ann["gpuctl-emu/scheduled"] = str(time.time())
    if ann.get("gpuctl-emu/admission"):
        set_pod_status(pod, node, "Failed", "waiting", "UnexpectedAdmissionError", msg=ann["gpuctl-emu/admission"],
                       log="")
        pod["status"].update(reason="UnexpectedAdmissionError", message="Pod was rejected: " + ann["gpuctl-emu/admission"])
        return
    rt = h.get("runtime") or {}
    kind = pod_kind(pod)
    if not rt.get("up"):
        return set_pod_status(pod, node, "Pending", "waiting", "ContainerCreating")
    if not rt.get("canRun"):
        return set_pod_status(pod, node, "Pending", "waiting", "ContainerCreating",
                              msg=None, log=None)
    started = float(pod["metadata"].get("annotations", {}).get("gpuctl-emu/scheduled") or
                    emu.parse_rfc3339(pod["metadata"]["creationTimestamp"]))
    t0 = emu.rfc3339(started)
    if kind == "flannel":
        nodeobj = get("nodes", None, node) or {}
        if not nodeobj.get("spec", {}).get("podCIDR"):
            log = "\n".join([
                emu.klog_line("I", "main.go:211", "CLI flags config: {etcdEndpoints:http://127.0.0.1:4001,http://127.0.0.1:2379 etcdPrefix:/coreos.com/network etcdKeyfile: etcdCertfile: etcdCAFile: etcdUsername: etcdPassword: version:false kubeSubnetMgr:true kubeApiUrl: kubeAnnotationPrefix:flannel.alpha.coreos.com kubeConfigFile: iface:[] ifaceRegex:[] ipMasq:true ifaceCanReach: subnetFile:/run/flannel/subnet.env publicIP: publicIPv6: subnetLeaseRenewMargin:60 healthzIP:0.0.0.0 healthzPort:8081 iptablesResyncSeconds:5 iptablesForwardRules:true netConfPath:/etc/kube-flannel/net-conf.json setNodeNetworkUnavailable:true}", started),
                emu.klog_line("I", "kube.go:139", "Waiting 10m0s for node controller to sync", started),
                emu.klog_line("I", "kube.go:469", "Starting kube subnet manager", started),
                emu.klog_line("I", "kube.go:146", "Node controller sync successful", started + 1),
                emu.klog_line("I", "main.go:231", "Created subnet manager: Kubernetes Subnet Manager - %s" % node, started + 1),
                emu.klog_line("I", "main.go:234", "Installing signal handlers", started + 1),
                emu.klog_line("I", "main.go:468", "Found network config - Backend type: vxlan", started + 1),
                emu.klog_line("E", "main.go:359", 'Error registering network: failed to acquire lease: node "%s" pod cidr not assigned' % node, started + 1),
                emu.klog_line("I", "main.go:448", "Stopping shutdownHandler...", started + 1)]) + "\n"
            return set_pod_status(pod, node, "Running", "crash", restarts=crash_state(started), log=log)
        return set_pod_status(pod, node, "Running", "running", log=emu.klog_line(
            "I", "main.go:468", "Found network config - Backend type: vxlan", started) + "\n" + emu.klog_line(
            "I", "kube.go:636", "List of node(%s) annotations: map[string]string{\"flannel.alpha.coreos.com/backend-type\":\"vxlan\"}" % node, started) + "\n"
            + emu.klog_line("I", "main.go:355", "Setting up masking rules", started + 1) + "\n"
            + emu.klog_line("I", "main.go:395", "Wrote subnet file to /run/flannel/subnet.env", started + 1) + "\n"
            + emu.klog_line("I", "main.go:399", "Running backend.", started + 1) + "\n")
    if kind == "device-plugin":
        return reconcile_device_plugin(pod, node, h, started)
    owner = ((pod["metadata"].get("ownerReferences") or [{}])[0]).get("kind")
    restart = pod["spec"].get("restartPolicy", "Always")
    if (owner == "Job" or restart in ("Never", "OnFailure")) and time.time() - started > run_seconds(pod):
        smi = smi_run(pod, h)
        if smi is not None and not smi[0]:
            set_pod_status(pod, node, "Failed", "terminated", log=smi[1])
            for cs in pod["status"].get("containerStatuses") or []:
                cs["state"]["terminated"].update(exitCode=6, reason="Error")
            return
        return set_pod_status(pod, node, "Succeeded", "terminated",
                              log=smi[1] if smi else "[test bed] container ran to completion (no real workload runs here)\n")
    return set_pod_status(pod, node, "Running", "running")


def dp_log_header(started, gpus, loaded=None):
    cfg = {"version": "v1", "flags": {"migStrategy": "none", "failOnInitError": True, "mpsRoot": "",
                                      "nvidiaDriverRoot": "/", "nvidiaDevRoot": "/", "gdsEnabled": False,
                                      "mofedEnabled": False, "useNodeFeatureAPI": None, "deviceDiscoveryStrategy": "auto",
                                      "plugin": {"passDeviceSpecs": False, "deviceListStrategy": ["envvar"],
                                                 "deviceIDStrategy": "uuid", "cdiAnnotationPrefix": "cdi.k8s.io/",
                                                 "nvidiaCTKPath": "/usr/bin/nvidia-ctk", "containerDriverRoot": "/driver-root"}},
           "resources": {"gpus": [{"pattern": "*", "name": "nvidia.com/gpu"}]},
           "sharing": (loaded or {}).get("sharing") or {"timeSlicing": {}}, "imex": {}}
    L = [emu.klog_line("I", "main.go:235", "Starting FS watcher for /var/lib/kubelet/device-plugins", started),
         emu.klog_line("I", "main.go:242", "Starting OS watcher.", started),
         emu.klog_line("I", "main.go:257", "Starting Plugins.", started),
         emu.klog_line("I", "main.go:314", "Loading configuration.", started),
         emu.klog_line("I", "main.go:339", "Updating config with default resource matching patterns.", started),
         emu.klog_line("I", "main.go:350", "\nRunning with config:\n" + json.dumps(cfg, indent=2), started),
         emu.klog_line("I", "main.go:353", "Retrieving plugins.", started)]
    return L


def plugin_config(pod, node):
    """What the plugin's config manager (init container and sidecar, as the Helm chart runs them) selects: the
    ConfigMap entry named by the node's NODE_LABEL label, else DEFAULT_CONFIG, else the only entry (FALLBACK_STRATEGIES
    named,single). Returns (config dict or None without a config manager, error text or None)."""
    spec = pod["spec"]
    init = [c for c in spec.get("initContainers") or [] if (c.get("command") or [""])[0] == "config-manager"]
    vol = [v for v in spec.get("volumes") or [] if v.get("name") == "available-configs" and v.get("configMap")]
    if not init or not vol:
        return None, None
    env = {e["name"]: e.get("value", "") for e in init[0].get("env") or [] if "name" in e}
    cm = get("configmaps", pod["metadata"]["namespace"], vol[0]["configMap"]["name"])
    if cm is None:
        return None, 'MountVolume.SetUp failed for volume "available-configs" : configmap "%s" not found' % vol[0]["configMap"]["name"]
    data = cm.get("data") or {}
    n = get("nodes", None, node) or {}
    want = ((n.get("metadata") or {}).get("labels") or {}).get(env.get("NODE_LABEL", "")) or env.get("DEFAULT_CONFIG", "")
    strategies = env.get("FALLBACK_STRATEGIES", "").split(",")
    name = want if want in data else (next(iter(data)) if "single" in strategies and len(data) == 1 else None)
    if name is None:
        return None, "error getting config: unable to find config '%s' in %s" % (want, "/available-configs")
    try:
        import yaml
        return yaml.safe_load(data[name]) or {}, None
    except Exception as e:
        return None, "unable to parse config file: %s" % e


def sharing_replicas(cfg):
    """nvidia.com/gpu replicas of a plugin config's sharing (time-slicing or MPS), 1 without sharing."""
    sh = (cfg or {}).get("sharing") or {}
    for mode in ("timeSlicing", "mps"):
        for r in (sh.get(mode) or {}).get("resources") or []:
            if r.get("name") == "nvidia.com/gpu":
                return int(r.get("replicas") or 1)
    return 1


# k8s-device-plugin's health.go: every Xid marks its GPU unhealthy but these application ones (and stays so until the
# plugin restarts: it never marks a device healthy again)
APPLICATION_XIDS = (13, 31, 43, 45, 68, 109)


def unhealthy_gpus(h, started):
    """The GPUs (PCI addresses) the node's device plugin, started at `started`, has marked unhealthy: a critical Xid
    logged while it ran (the kubelet sends this boot's Xids of the GPUs present)."""
    return sorted(set(x[1] for x in h.get("xids") or [] if x[2] not in APPLICATION_XIDS and x[0] >= started))


def reconcile_device_plugin(pod, node, h, started):
    nv = h.get("nvml") or "no-library"
    cfg, err = plugin_config(pod, node)
    if err:
        return set_pod_status(pod, node, "Pending", "crash", restarts=crash_state(started),
                              log=emu.klog_line("E", "main.go:106", err, started) + "\n")
    L = dp_log_header(started, h.get("gpus") or 0, cfg)
    if nv == "no-library":
        L += [emu.klog_line("I", "factory.go:104", "Detected non-NVML platform: could not load NVML library: libnvidia-ml.so.1: cannot open shared object file: No such file or directory", started),
              emu.klog_line("I", "factory.go:104", "Detected non-Tegra platform: /sys/devices/soc0/family file not found", started),
              emu.klog_line("E", "factory.go:112", "Incompatible platform detected", started),
              emu.klog_line("E", "factory.go:113", "If this is a GPU node, did you configure the NVIDIA Container Toolkit?", started),
              emu.klog_line("E", "factory.go:114", "You can check the prerequisites at: https://github.com/NVIDIA/k8s-device-plugin#prerequisites", started),
              emu.klog_line("E", "factory.go:115", "You can learn how to set the runtime at: https://github.com/NVIDIA/k8s-device-plugin#quick-start", started),
              emu.klog_line("E", "factory.go:116", "If this is not a GPU node, you should set up a toleration or nodeSelector to only deploy this plugin on GPU nodes", started),
              emu.klog_line("E", "main.go:178", "error starting plugins: error creating plugin manager: unable to create plugin manager: platform detection failed", started)]
        return set_pod_status(pod, node, "Running", "crash", restarts=crash_state(started), log="\n".join(L) + "\n")
    if nv == "driver-not-loaded":
        L += [emu.klog_line("I", "factory.go:104", "Detected NVML platform: found NVML library", started),
              emu.klog_line("I", "factory.go:104", "Detected non-Tegra platform: /sys/devices/soc0/family file not found", started),
              emu.klog_line("E", "main.go:178", "error starting plugins: error creating plugin manager: unable to create plugin manager: nvml init failed: ERROR_DRIVER_NOT_LOADED", started)]
        return set_pod_status(pod, node, "Running", "crash", restarts=crash_state(started), log="\n".join(L) + "\n")
    L += [emu.klog_line("I", "factory.go:104", "Detected NVML platform: found NVML library", started),
          emu.klog_line("I", "factory.go:104", "Detected non-Tegra platform: /sys/devices/soc0/family file not found", started)]
    _res, mig_err = mig.plugin_resources(h.get("gpus") or 0, h.get("migEnabledGpus") or 0, h.get("migDevices") or [], cfg)
    if mig_err:
        L.append(emu.klog_line("E", "main.go:178", mig_err, started))
        return set_pod_status(pod, node, "Running", "crash", restarts=crash_state(started), log="\n".join(L) + "\n")
    if not h.get("gpus"):
        L.append(emu.klog_line("I", "main.go:365", "No devices found. Waiting indefinitely.", started + 1))
    else:
        L += [emu.klog_line("I", "server.go:176", "Starting GRPC server for 'nvidia.com/gpu'", started + 1),
              emu.klog_line("I", "server.go:117", "Starting to serve 'nvidia.com/gpu' on /var/lib/kubelet/device-plugins/nvidia-gpu.sock", started + 1),
              emu.klog_line("I", "server.go:125", "Registered device plugin for 'nvidia.com/gpu' with Kubelet", started + 1)]
        for x in h.get("xids") or []:
            if x[2] not in APPLICATION_XIDS and x[0] >= started:
                L.append(emu.klog_line("I", "health.go:161", "XidCriticalError: Xid=%d on Device=%s; marking device as unhealthy." % (x[2], x[1]), x[0]))
    pod.setdefault("metadata", {}).setdefault("annotations", {})
    return set_pod_status(pod, node, "Running", "running", log="\n".join(L) + "\n")
