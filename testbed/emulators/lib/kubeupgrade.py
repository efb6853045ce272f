# kubeadm upgrade plan | apply | node (cmd/kubeadm/app/cmd/upgrade, app/phases/upgrade/policy.go), and the version
# the emulated API server reports: the tag of its static pod manifest's image, as a real kube-apiserver's binary is
# the one its image holds.
# The kubeadm emulator calls cmd_upgrade(argv, k) with itself as k (Fail, out, errout, parse, admin_client, VERSION,
# static_manifest, kubelet_config, restart_kubelet, TRACE).
import os
import re
import subprocess
import sys
import time

import emu

MANIFESTS = "/etc/kubernetes/manifests"
CONTROL_PLANE = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"
APISERVER_UNIT = "gpuctl-emu-apiserver.service"
CM = "/api/v1/namespaces/kube-system/configmaps/"
# policy.go: MaximumAllowedMinorVersionUpgradeSkew, ...DowngradeSkew, ...KubeletSkew
UPGRADE_SKEW, DOWNGRADE_SKEW, KUBELET_SKEW = 1, 1, 3


def manifest_version(default):
    """The version of kube-apiserver's image in its static pod manifest ("1.35.1"), else default."""
    m = re.search(r"kube-apiserver:v(\d+\.\d+\.\d+)", emu.read(MANIFESTS + "/kube-apiserver.yaml") or "")
    return m.group(1) if m else default


def semver(s):
    m = re.match(r"^v?(\d+)\.(\d+)\.(\d+)$", s or "")
    return tuple(int(x) for x in m.groups()) if m else None


def v(t):
    return "v%d.%d.%d" % t


def stamp():
    return time.strftime("%Y-%m-%d-%H-%M-%S", time.localtime())


def klog_warning(msg):
    t = time.time()
    sys.stderr.write("W%s %7d version.go:%d] %s\n" % (time.strftime("%m%d %H:%M:%S", time.localtime(t))
                                                     + ".%06d" % int((t % 1) * 1e6), os.getpid(), 104, msg))
    sys.stderr.flush()


def cluster_state(k, client):
    """(cluster version tuple, {node: kubeletVersion}, [NotReady control-plane nodes], ClusterConfiguration dict)."""
    try:
        ver = client.get("/version")
        nodes = client.get("/api/v1/nodes")["items"]
        cm = client.get(CM + "kubeadm-config")
    except emu.ApiError as e:
        raise k.Fail("error: error execution phase preflight: [upgrade/config] FATAL: failed to getAPIEndpoint: %s" % e)
    kubelets, not_ready = {}, []
    for n in nodes:
        name = n["metadata"]["name"]
        kubelets[name] = n.get("status", {}).get("nodeInfo", {}).get("kubeletVersion", "")
        ready = next((c["status"] for c in n.get("status", {}).get("conditions") or [] if c["type"] == "Ready"), "Unknown")
        if "node-role.kubernetes.io/control-plane" in (n["metadata"].get("labels") or {}) and ready != "True":
            not_ready.append(name)
    cc = emu.yaml_docs(cm["data"]["ClusterConfiguration"])[0]
    return semver(ver["gitVersion"]), kubelets, not_ready, cc


def read_config_lines(k, indent=""):
    k.out('[upgrade/config] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...')
    k.out("[upgrade/config] Use 'kubeadm init phase upload-config kubeadm --config your-config-file' to re-upload it.")


def health(k, not_ready, ignore):
    if not_ready and not ({"all", "controlplanenodesready"} & set(x.lower() for x in ignore)):
        raise k.Fail("error: error execution phase preflight: [preflight] Some fatal errors occurred:\n"
                     "\t[ERROR ControlPlaneNodesReady]: there are NotReady control-planes in the cluster: [%s]\n"
                     "[preflight] If you know what you are doing, you can make a check non-fatal with `--ignore-preflight-errors=...`"
                     % " ".join(not_ready))


def policy(new, cluster, kubeadm, kubelets):
    """EnforceVersionPolicies: (mandatory, skippable) error texts."""
    mandatory, skippable = [], []
    ns = v(new)
    if new[:2] <= (1, 33):
        mandatory.append("Specified version to upgrade to %q is equal to or lower than the minimum supported version %q. "
                         "Please specify a higher version to upgrade to" % (ns, v(cluster)))
    if new[1] > cluster[1] + UPGRADE_SKEW:
        mandatory.append("Specified version to upgrade to %q is too high; kubeadm can upgrade only %d minor version at a time"
                         % (ns, UPGRADE_SKEW))
    if new[1] < cluster[1] - DOWNGRADE_SKEW:
        mandatory.append("Specified version to downgrade to %q is too low; kubeadm can downgrade only %d minor version at a time"
                         % (ns, DOWNGRADE_SKEW))
    if kubeadm < new:
        if new[1] > kubeadm[1]:
            mandatory.append("Specified version to upgrade to %q is at least one minor release higher than the kubeadm minor "
                             "release (%d > %d). Such an upgrade is not supported" % (ns, new[1], kubeadm[1]))
        else:
            skippable.append("Specified version to upgrade to %q is higher than the kubeadm version %q. Upgrade kubeadm first "
                             "using the tool you used to install kubeadm" % (ns, v(kubeadm)))
    if kubeadm[0] > new[0] or kubeadm[1] > new[1]:
        skippable.append("Kubeadm version %s can only be used to upgrade to Kubernetes version %d.%d" % (v(kubeadm), kubeadm[0], kubeadm[1]))
    old = sorted({s for s in kubelets.values() if semver(s) and new[1] > semver(s)[1] + KUBELET_SKEW})
    if old:
        skippable.append("There are kubelets in this cluster that are too old that have these versions [%s]" % " ".join(old))
    return mandatory, skippable


def fmt_errs(errs):
    return "".join("\t- %s\n" % e for e in errs)


# ------------------------------------------------------------------ plan
def cmd_plan(argv, k):
    f, pos = k.parse(argv, {"config", "ignore-preflight-errors", "v", "output", "o", "kubeconfig"})
    kubeadm = semver(k.VERSION)
    k.out("[preflight] Running pre-flight checks.")
    read_config_lines(k)
    client = k.admin_client(f.get("kubeconfig"))
    k.out("[upgrade] Running cluster health checks")
    cluster, kubelets, not_ready, cc = cluster_state(k, client)
    health(k, not_ready, (f.get("ignore-preflight-errors") or "").split(","))
    k.out("[upgrade] Fetching available versions to upgrade to")
    k.out("[upgrade/versions] Cluster version: %s" % v(cluster))
    k.out("[upgrade/versions] kubeadm version: %s" % v(kubeadm))
    klog_warning('could not fetch a Kubernetes version from the internet: unable to get URL "https://dl.k8s.io/release/stable.txt": '
                 'Get "https://dl.k8s.io/release/stable.txt": dial tcp: lookup dl.k8s.io on 127.0.0.53:53: server misbehaving')
    klog_warning("falling back to the local client version: %s" % v(kubeadm))
    k.out("[upgrade/versions] Target version: %s" % v(kubeadm))
    k.out("[upgrade/versions] Latest version in the v%d.%d series: %s" % (cluster[0], cluster[1], v(max(cluster, kubeadm) if kubeadm[:2] == cluster[:2] else cluster)))
    k.out()
    if kubeadm <= cluster:
        k.out("Awesome, you're up-to-date! Enjoy!")
        return 0
    mandatory, _ = policy(kubeadm, cluster, kubeadm, kubelets)
    if mandatory:
        raise k.Fail("error: [upgrade/versions] FATAL: the version kubeadm would upgrade to is invalid due to these fatal errors:\n\n%s"
                     % fmt_errs(mandatory))
    k.out("Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':")
    k.out("COMPONENT   NODE%s CURRENT   TARGET" % (" " * max(1, max(len(n) for n in kubelets) - 3)))
    w = max(len(n) for n in kubelets) + 1
    for n, kv in sorted(kubelets.items()):
        k.out("kubelet     %s %-9s %s" % (n.ljust(w - 1), kv, v(kubeadm)))
    k.out()
    k.out("Upgrade to the latest stable version:\n")
    k.out("COMPONENT                 NODE%s CURRENT   TARGET" % (" " * max(1, w - 4)))
    master = next((n for n in kubelets if n in (emu.hostname(),)), sorted(kubelets)[0])
    for c in CONTROL_PLANE:
        k.out("%-25s %s %-9s %s" % (c, master.ljust(w - 1), v(cluster), v(kubeadm)))
    k.out("%-25s %s %-9s %s" % ("kube-proxy", "".ljust(w - 1), v(cluster), v(kubeadm)))
    k.out("%-25s %s %-9s %s" % ("CoreDNS", "".ljust(w - 1), "v1.13.1", "v1.13.1"))
    k.out("%-25s %s %-9s %s" % ("etcd", master.ljust(w - 1), "3.6.6-0", "3.6.6-0"))
    k.out("\nYou can now apply the upgrade by executing the following command:\n\n\tkubeadm upgrade apply %s\n" % v(kubeadm))
    k.out("_" * 69 + "\n")
    return 0


# ------------------------------------------------------------------ apply
def cmd_apply(argv, k):
    f, pos = k.parse(argv, {"config", "ignore-preflight-errors", "v", "patches", "kubeconfig", "image-pull-timeout"})
    yes = f.get("yes", f.get("y", "false")) == "true" or f.get("force", f.get("f", "false")) == "true"
    force = f.get("force", f.get("f", "false")) == "true"
    dry = f.get("dry-run") == "true"
    if not pos:
        raise k.Fail("error: missing one or more required arguments. Required arguments: [version]")
    new = semver(pos[0])
    if not new:
        raise k.Fail('error: error execution phase preflight: [upgrade/version] FATAL: unable to parse normalized version "%s" as a semantic version' % pos[0])
    kubeadm = semver(k.VERSION)
    read_config_lines(k)
    client = k.admin_client(f.get("kubeconfig"))
    k.out("[upgrade/preflight] Running preflight checks")
    k.out("[upgrade] Running cluster health checks")
    cluster, kubelets, not_ready, cc = cluster_state(k, client)
    health(k, not_ready, (f.get("ignore-preflight-errors") or "").split(","))
    k.out('[upgrade/preflight] You have chosen to upgrade the cluster version to "%s"' % v(new))
    k.out("[upgrade/versions] Cluster version: %s" % v(cluster))
    k.out("[upgrade/versions] kubeadm version: %s" % v(kubeadm))
    mandatory, skippable = policy(new, cluster, kubeadm, kubelets)
    if mandatory:
        raise k.Fail("error: error execution phase preflight: [upgrade/version] FATAL: the --version argument is invalid due to "
                     "these fatal errors:\n\n%s\nPlease fix the misalignments highlighted above and try upgrading again" % fmt_errs(mandatory))
    if skippable and not force:
        raise k.Fail("error: error execution phase preflight: [upgrade/version] FATAL: the --version argument is invalid due to "
                     "these errors:\n\n%s\nCan be bypassed if you pass the --force flag" % fmt_errs(skippable))
    if not yes and not dry:
        sys.stdout.write("[upgrade] Are you sure you want to proceed? [y/N]: ")
        sys.stdout.flush()
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            raise k.Fail("error: error execution phase preflight: won't proceed; the user didn't answer (Y|n) in order to continue")
    k.out("[upgrade/preflight] Pulling images required for setting up a Kubernetes cluster")
    k.out("[upgrade/preflight] This might take a minute or two, depending on the speed of your internet connection")
    k.out("[upgrade/preflight] You can also perform this action beforehand using 'kubeadm config images pull'")
    k.out('[upgrade/control-plane] Upgrading your static Pod-hosted control plane to version "%s" (timeout: 5m0s)...' % v(new))
    if dry:
        k.out("[dryrun] Would write new static Pod manifests for %s with image tag %s" % (", ".join(CONTROL_PLANE), v(new)))
        k.out("[upgrade] SUCCESS! A control plane node of your cluster was upgraded to \"%s\"." % v(new))
        return 0
    if f.get("certificate-renewal", "true") != "false":
        renew_certificates(k)
    upgrade_static_pods(k, client, new)
    k.out("[upgrade/control-plane] The control plane instance for this node was successfully upgraded!")
    cc["kubernetesVersion"] = v(new)
    put_configmap(k, client, "kubeadm-config", {"ClusterConfiguration": emu.yaml_dump(cc)})
    k.out('[upload-config] Storing the configuration used in ConfigMap "kubeadm-config" in the "kube-system" Namespace')
    kubelet_upgrade(k, client)
    addons(k, client, new)
    k.out()
    k.out('[upgrade] SUCCESS! A control plane node of your cluster was upgraded to "%s".' % v(new))
    k.out()
    k.out("[upgrade] Now please proceed with upgrading the rest of the nodes by following the right order.")
    return 0


def upgrade_static_pods(k, client, new):
    """PerformStaticPodUpgrade: each control-plane component's manifest rewritten to the new image (the old one backed
    up), the kubelet restarting it; this node's mirror pods then show the new image (as the kubelet reports them). The
    wait for the API server asks this node's own API server, not the endpoint (another master still runs the old one)."""
    upgraded = "/etc/kubernetes/tmp/kubeadm-upgraded-manifests%d" % (int(time.time() * 1000) % 10 ** 9)
    backup = "/etc/kubernetes/tmp/kubeadm-backup-manifests-%s" % stamp()
    k.out('[upgrade/staticpods] Writing new Static Pod manifests to "%s"' % upgraded)
    node = emu.hostname()
    for c in CONTROL_PLANE:
        path = "%s/%s.yaml" % (MANIFESTS, c)
        old = emu.read(path) or ""
        text = re.sub(r"(image:\s*\S*/%s:)v\d+\.\d+\.\d+" % re.escape(c), r"\g<1>" + v(new), old)
        if text == old:
            k.out("[upgrade/staticpods] Current and new manifests of %s are equal, skipping upgrade" % c)
            continue
        k.out('[upgrade/staticpods] Preparing for "%s" upgrade' % c)
        emu.write("%s/%s.yaml" % (upgraded, c), text, 0o600)
        emu.write("%s/%s.yaml" % (backup, c), old, 0o600)
        emu.write(path, text, 0o600)
        k.out('[upgrade/staticpods] Moving new manifest to "%s" and backing up old manifest to "%s/%s.yaml"' % (path, backup, c))
        k.out("[upgrade/staticpods] Waiting for the kubelet to restart the component")
        k.out("[upgrade/staticpods] This can take up to 5m0s")
        if c == "kube-apiserver":
            restart_apiserver(k, local_client(client), new)
        pods = mirror_pods(client, c)
        set_mirror_image(client, pods, node, c, new)
        k.out('[apiclient] Found %d Pods for label selector component=%s' % (max(1, len(pods)), c))
        k.out('[upgrade/staticpods] Component "%s" upgraded successfully!' % c)


def local_client(client):
    """A client of this node's own API server (its manifest's --advertise-address and --secure-port), with the
    endpoint client's credentials."""
    text = emu.read(MANIFESTS + "/kube-apiserver.yaml") or ""
    a = re.search(r"--advertise-address=(\S+)", text)
    p = re.search(r"--secure-port=(\d+)", text)
    if not a:
        return client
    host = "[%s]" % a.group(1) if ":" in a.group(1) else a.group(1)
    return emu.Client("https://%s:%s" % (host, p.group(1) if p else "6443"), ca=client.ca, cert=client.cert, key=client.key,
                      token=client.token, insecure=client.insecure, timeout=client.timeout)


def mirror_pods(client, component):
    try:
        return client.get("/api/v1/namespaces/kube-system/pods?labelSelector=component%3D" + component)["items"]
    except (emu.ApiError, KeyError):
        return []


def set_mirror_image(client, pods, node, component, new):
    for p in pods:
        if p.get("spec", {}).get("nodeName") != node:
            continue
        for ctr in p["spec"].get("containers") or []:
            ctr["image"] = re.sub(r":v\d+\.\d+\.\d+$", ":" + v(new), ctr["image"])
        try:
            client.request("PUT", "/api/v1/namespaces/kube-system/pods/" + p["metadata"]["name"], p)
        except emu.ApiError:
            pass


def unupgraded(client, new):
    """UnupgradedControlPlaneInstances: the nodes whose kube-apiserver mirror pod's image is not at the new version."""
    out = []
    for p in mirror_pods(client, "kube-apiserver"):
        img = ((p.get("spec", {}).get("containers") or [{}])[0]).get("image", "")
        if not img.endswith(":" + v(new)):
            out.append(p.get("spec", {}).get("nodeName", ""))
    return sorted(n for n in out if n)


def addons(k, client, new):
    """The addon phase: CoreDNS and kube-proxy upgraded only once every control plane instance runs the new version;
    until then one skip line per addon naming the instances not upgraded yet."""
    left = unupgraded(client, new)
    if left:
        for _ in ("coredns", "kube-proxy"):
            k.out("[upgrade/addon] Skipping upgrade of addons because control plane instances [%s] have not been upgraded" % " ".join(left))
        return
    try:
        ds = client.get("/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy")
        for ctr in ds["spec"]["template"]["spec"]["containers"]:
            ctr["image"] = re.sub(r":v\d+\.\d+\.\d+$", ":" + v(new), ctr["image"])
        client.request("PUT", "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy", ds)
    except emu.ApiError:
        pass
    k.out("[upgrade/addon] Applied essential addon: CoreDNS")
    k.out("[upgrade/addon] Applied essential addon: kube-proxy")


def renew_certificates(k):
    """--certificate-renewal (default true): kubeadm renews every certificate it manages, each component's before its
    new manifest is written, and the kubeconfig files' embedded client certificates, admin.conf's included (a copy of
    admin.conf made before, e.g. a user's ~/.kube/config, keeps the old one). The CAs are kept."""
    import kubeadm_certs
    for name, path, ca, _ in kubeadm_certs.LEAVES:
        if kubeadm_certs.leaf_pem(path)[0] is None:
            continue
        try:
            kubeadm_certs.renew_leaf(path, ca)
        except kubeadm_certs.Fail as e:
            raise k.Fail("error: error execution phase control-plane: couldn't upgrade control plane: failed to renew certificates "
                         "for component: %s" % e)
        k.out('[upgrade/staticpods] Renewing %s certificate' % name)


def restart_apiserver(k, client, new):
    """The kubelet sees the manifest's hash change and restarts the static pod: the emulated API server restarts and
    reports the version of its new image."""
    if emu.systemd_running():
        subprocess.run(["systemctl", "restart", APISERVER_UNIT], capture_output=True)
    t0 = time.time()
    while time.time() - t0 < 300:
        try:
            if semver(client.get("/version").get("gitVersion")) == new:
                return
        except emu.ApiError:
            pass
        time.sleep(0.5)
    raise k.Fail("error: error execution phase control-plane: couldn't upgrade control plane. kubeadm has tried to recover everything "
                 "into the earlier state. Errors faced: timed out waiting for the condition")


def put_configmap(k, client, name, data):
    cm = client.get(CM + name)
    cm["data"] = data
    code, body = client.request("PUT", CM + name, cm, raw=True)
    if code >= 300:
        raise k.Fail("error: error execution phase upload-config: error uploading the %s ConfigMap: %s" % (name, body))


def kubelet_upgrade(k, client):
    """upgrade apply/node phase kubelet-config: back the file up, write the cluster's kubelet-config ConfigMap to it,
    keeping the node's own containerRuntimeEndpoint (from the node's cri-socket, as kubeadm does)."""
    cur = emu.read(KUBELET_CONFIG)
    if cur is None:
        raise k.Fail("error: error execution phase kubelet-config: failed to read kubelet config: open %s: no such file or directory" % KUBELET_CONFIG)
    cm = client.get(CM + "kubelet-config")
    cfg = emu.yaml_docs(cm["data"]["kubelet"])[0]
    old = emu.yaml_docs(cur)[0] or {}
    cfg["containerRuntimeEndpoint"] = old.get("containerRuntimeEndpoint", cfg.get("containerRuntimeEndpoint", ""))
    if old.get("cgroupDriver"):
        cfg["cgroupDriver"] = old["cgroupDriver"]
    d = "/etc/kubernetes/tmp/kubeadm-kubelet-config%d" % (int(time.time() * 1000) % 10 ** 9)
    emu.write(d + "/config.yaml", cur, 0o600)
    k.out("[upgrade] Backing up kubelet config file to %s/config.yaml" % d)
    emu.write(KUBELET_CONFIG, emu.yaml_dump(cfg))
    k.out('[kubelet-start] Writing kubelet configuration to file "%s"' % KUBELET_CONFIG)
    k.out("[upgrade/kubelet-config] The kubelet configuration for this node was successfully upgraded!")


# ------------------------------------------------------------------ node
def cmd_node(argv, k):
    f, pos = k.parse(argv, {"ignore-preflight-errors", "v", "patches", "kubeconfig", "certificate-renewal", "etcd-upgrade"})
    control_plane = emu.exists(MANIFESTS + "/kube-apiserver.yaml")
    kc = f.get("kubeconfig") or ("/etc/kubernetes/admin.conf" if control_plane else "/etc/kubernetes/kubelet.conf")
    if not emu.exists(kc):
        raise k.Fail("error: error execution phase preflight: couldn't create a Kubernetes client from file \"%s\": failed to load "
                     "admin kubeconfig: open %s: no such file or directory" % (kc, kc))
    read_config_lines(k)
    client = k.admin_client(kc)
    k.out("[preflight] Running pre-flight checks")
    try:
        cm = client.get(CM + "kubeadm-config")
    except emu.ApiError as e:
        raise k.Fail("error: error execution phase preflight: unable to fetch the kubeadm-config ConfigMap: %s" % e)
    if not control_plane:
        k.out("[preflight] Skipping prepull. Not a control plane node.")
        k.out("[upgrade/control-plane] Skipping phase. Not a control plane node.")
        k.out("[upgrade/kubeconfig] Skipping phase. Not a control plane node.")
        kubelet_upgrade(k, client)
        k.out("[upgrade/addon] Skipping the addon/coredns phase. Not a control plane node.")
        k.out("[upgrade/addon] Skipping the addon/kube-proxy phase. Not a control plane node.")
        return 0
    # a control plane: the version `kubeadm upgrade apply` uploaded to kubeadm-config, this node's static pods to it
    cc = emu.yaml_docs(cm["data"]["ClusterConfiguration"])[0] or {}
    new = semver(cc.get("kubernetesVersion"))
    if not new:
        raise k.Fail("error: error execution phase preflight: unable to parse kubernetesVersion %r of the kubeadm-config ConfigMap" % cc.get("kubernetesVersion"))
    kubeadm = semver(k.VERSION)
    if new > kubeadm:
        raise k.Fail("error: error execution phase control-plane: couldn't upgrade control plane: the cluster version \"%s\" is newer than "
                     "kubeadm's \"%s\": upgrade kubeadm first" % (v(new), v(kubeadm)))
    k.out("[upgrade/preflight] Pulling images required for setting up a Kubernetes cluster")
    k.out("[upgrade/preflight] This might take a minute or two, depending on the speed of your internet connection")
    k.out("[upgrade/preflight] You can also perform this action beforehand using 'kubeadm config images pull'")
    k.out('[upgrade/control-plane] Upgrading your Static Pod-hosted control plane instance to version "%s"...' % v(new))
    if f.get("dry-run") == "true":
        k.out("[dryrun] Would write new static Pod manifests for %s with image tag %s" % (", ".join(CONTROL_PLANE), v(new)))
        return 0
    if f.get("certificate-renewal", "true") != "false":
        renew_certificates(k)
    upgrade_static_pods(k, client, new)
    k.out("[upgrade/control-plane] The control plane instance for this node was successfully upgraded!")
    k.out("[upgrade/kubeconfig] The kubeconfig files for this node were successfully upgraded!")
    kubelet_upgrade(k, client)
    addons(k, client, new)
    k.out("[upgrade] The upgrade for this node was successfully completed!")
    return 0


def cmd_upgrade(argv, k):
    sub = {"plan": cmd_plan, "apply": cmd_apply, "node": cmd_node}
    if not argv or argv[0] in ("-h", "--help"):
        k.out("Upgrade your cluster smoothly to a newer version with this command\n\nUsage:\n  kubeadm upgrade [flags]\n  kubeadm upgrade [command]\n\n"
              "Available Commands:\n  apply       Upgrade your Kubernetes cluster to the specified version\n"
              "  diff        Show what differences would be applied to existing static pod manifests. See also: kubeadm upgrade apply --dry-run\n"
              "  node        Upgrade commands for a node in the cluster\n  plan        Check which versions are available to upgrade to and validate whether your current cluster is upgradeable.")
        return 0
    fn = sub.get(argv[0])
    if not fn:
        raise k.Fail('unknown command "%s" for "kubeadm upgrade"' % argv[0])
    return fn(argv[1:], k)
