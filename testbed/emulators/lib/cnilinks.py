# The interfaces a CNI makes on a node once its configuration is in /etc/cni/net.d, so that a reset has them to
# clean up, as `kubeadm reset` says it leaves them: flannel's VXLAN device flannel.1 (VNI 1, UDP 8472) and the bridge
# plugin's cni0; calico's vxlan.calico (VNI 4096, UDP 4789). Made with the real `ip` in the host's own network
# namespace; a kind the kernel lacks (ipip's tunl0 in a container) is not made.
import os
import subprocess

LINKS = {
    "flannel": [("flannel.1", ["type", "vxlan", "id", "1", "dstport", "8472", "nolearning"]), ("cni0", ["type", "bridge"])],
    "calico": [("vxlan.calico", ["type", "vxlan", "id", "4096", "dstport", "4789"])],
}


def _exists(name):
    return subprocess.run(["ip", "link", "show", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def ensure(cni_dir):
    """Makes the links of each CNI whose configuration is in cni_dir and that are missing; returns the names made."""
    made = []
    names = os.listdir(cni_dir) if os.path.isdir(cni_dir) else []
    for cni, links in LINKS.items():
        if not any(cni in n for n in names):
            continue
        for name, spec in links:
            if _exists(name):
                continue
            if subprocess.run(["ip", "link", "add", name] + spec, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
                subprocess.run(["ip", "link", "set", name, "up"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                made.append(name)
    return made
