"""The test bed kubeadm's certificate commands, on the real PKI its init wrote with openssl:

  kubeadm certs check-expiration   the two tables kubeadm prints (certificates, then certificate authorities)
  kubeadm certs renew all|NAME     each leaf re-signed by its CA for one more year, its key, subject, SANs and usages
                                   kept; kubeconfig files get their embedded client certificate renewed
and, called from init, what kubeadm init writes that the older emulator code did not: the etcd and front-proxy
client leaves, and the kubelet-finalize phase (the master's kubelet.conf pointing at a rotatable
/var/lib/kubelet/pki/kubelet-client-current.pem).
"""
import datetime
import os
import re
import sys
import time

import emu

PKI = "/etc/kubernetes/pki"
KUBE = "/etc/kubernetes"
CAS = [("ca", PKI + "/ca"), ("etcd-ca", PKI + "/etcd/ca"), ("front-proxy-ca", PKI + "/front-proxy-ca")]
CA_FILE = dict(CAS)
# name in the tables, file (".crt" pair, or a kubeconfig), signing CA, the long name `renew` prints
LEAVES = [
    ("admin.conf", KUBE + "/admin.conf", "ca", "certificate embedded in the kubeconfig file for the admin to use and for kubeadm itself"),
    ("apiserver", PKI + "/apiserver", "ca", "certificate for serving the Kubernetes API"),
    ("apiserver-etcd-client", PKI + "/apiserver-etcd-client", "etcd-ca", "certificate the apiserver uses to access etcd"),
    ("apiserver-kubelet-client", PKI + "/apiserver-kubelet-client", "ca", "certificate for the API server to connect to kubelet"),
    ("controller-manager.conf", KUBE + "/controller-manager.conf", "ca", "certificate embedded in the kubeconfig file for the controller manager to use"),
    ("etcd-healthcheck-client", PKI + "/etcd/healthcheck-client", "etcd-ca", "certificate for liveness probes to healthcheck etcd"),
    ("etcd-peer", PKI + "/etcd/peer", "etcd-ca", "certificate for etcd nodes to communicate with each other"),
    ("etcd-server", PKI + "/etcd/server", "etcd-ca", "certificate for serving etcd"),
    ("front-proxy-client", PKI + "/front-proxy-client", "front-proxy-ca", "certificate for the front proxy client"),
    ("scheduler.conf", KUBE + "/scheduler.conf", "ca", "certificate embedded in the kubeconfig file for the scheduler manager to use"),
    ("super-admin.conf", KUBE + "/super-admin.conf", "ca", "certificate embedded in the kubeconfig file for the super-admin"),
]


def out(s=""):
    sys.stdout.write(s + "\n")
    sys.stdout.flush()


class Fail(Exception):
    pass


# ---------------------------------------------------------------- reading and writing a leaf
def _kubeconfig_user(path):
    doc = emu.yaml_docs(emu.read(path) or "")
    doc = doc[0] if doc else {}
    users = doc.get("users") or []
    return doc, (users[0].get("user") if users else None) or {}


def leaf_pem(path):
    """(cert, key) PEM of a leaf, or (None, None) when it is missing."""
    if path.endswith(".conf"):
        if not emu.exists(path):
            return None, None
        _, u = _kubeconfig_user(path)
        if not u.get("client-certificate-data"):
            return None, None
        return emu.unb64(u["client-certificate-data"]), emu.unb64(u.get("client-key-data", ""))
    if not emu.exists(path + ".crt"):
        return None, None
    return emu.read(path + ".crt"), emu.read(path + ".key")


def _store(path, crt, key):
    if path.endswith(".conf"):
        doc, u = _kubeconfig_user(path)
        u["client-certificate-data"] = emu.b64(crt)
        emu.write(path, emu.yaml_dump(doc), 0o600)
    else:
        emu.write(path + ".crt", crt)
        if key is not None:
            emu.write(path + ".key", key, 0o600)


def not_after(pem):
    line = emu.openssl("x509", "-noout", "-enddate", inp=pem).strip()
    return datetime.datetime.strptime(line.split("=", 1)[1], "%b %d %H:%M:%S %Y GMT").replace(tzinfo=datetime.timezone.utc)


def _subject(pem):
    s = emu.openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253", inp=pem).strip()
    s = s.split("=", 1)[1] if s.startswith("subject=") else s
    cn, orgs = "", []
    for part in s.split(","):
        k, _, v = part.strip().partition("=")
        if k == "CN":
            cn = v
        elif k == "O":
            orgs.append(v)
    return cn, orgs


def _ext(pem, name):
    try:
        text = emu.openssl("x509", "-noout", "-ext", name, inp=pem)
    except RuntimeError:
        return ""
    return " ".join(text.splitlines()[1:]).strip()


def renew_leaf(path, ca):
    """Re-signs the leaf at path with its CA for 365 days, keeping its key, subject, SANs and usages."""
    crt, key = leaf_pem(path)
    ca_crt, ca_key = emu.read(CA_FILE[ca] + ".crt"), emu.read(CA_FILE[ca] + ".key")
    if ca_key is None:
        raise Fail("failed to renew certificate %s: the CA %s has no key (external CA)" % (os.path.basename(path), ca))
    cn, orgs = _subject(crt)
    sans = [s.strip().replace("IP Address:", "IP:") for s in _ext(crt, "subjectAltName").split(",") if s.strip()]
    usage = _ext(crt, "extendedKeyUsage")
    csr, _ = emu.make_csr(cn, orgs, key=key)
    new = emu.sign_csr(csr, ca_crt, ca_key, days=365, server_sans=sans if "Server" in usage else None,
                       client="Client" in usage)
    _store(path, new, None)


# ---------------------------------------------------------------- what init writes
def init_leaves(addr, node_name):
    """kubeadm init's etcd and front-proxy client leaves (the etcd CA and front-proxy CA exist by now)."""
    e_crt, e_key = emu.read(PKI + "/etcd/ca.crt"), emu.read(PKI + "/etcd/ca.key")
    sans = ["DNS:" + node_name, "DNS:localhost", "IP:" + addr, "IP:127.0.0.1", "IP:0:0:0:0:0:0:0:1"]
    for name, cn, orgs, server in (("etcd/server", node_name, [], sans), ("etcd/peer", node_name, [], sans),
                                   ("etcd/healthcheck-client", "kube-etcd-healthcheck-client", [], None),
                                   ("apiserver-etcd-client", "kube-apiserver-etcd-client", [], None)):
        out('[certs] Generating "%s" certificate and key' % name)
        if server:
            out("[certs] %s serving cert is signed for DNS names [%s localhost] and IPs [%s 127.0.0.1 ::1]" % (name, node_name, addr))
        crt, key = emu.gen_signed(cn, orgs, e_crt, e_key, server_sans=server, client=True)
        _store(PKI + "/" + name, crt, key)
    out('[certs] Generating "front-proxy-client" certificate and key')
    crt, key = emu.gen_signed("front-proxy-client", [], emu.read(PKI + "/front-proxy-ca.crt"), emu.read(PKI + "/front-proxy-ca.key"))
    _store(PKI + "/front-proxy-client", crt, key)


def kubelet_finalize():
    """kubeadm init's kubelet-finalize phase: kubelet.conf's embedded client certificate moved to the kubelet's
    rotatable kubelet-client-current.pem, which kubelet.conf then names."""
    path = KUBE + "/kubelet.conf"
    crt, key = leaf_pem(path)
    if crt is None:
        return
    pem = "/var/lib/kubelet/pki/kubelet-client-%s.pem" % time.strftime("%Y-%m-%d-%H-%M-%S")
    cur = "/var/lib/kubelet/pki/kubelet-client-current.pem"
    emu.write(pem, crt + key, 0o600)
    if os.path.lexists(emu.R(cur)):
        os.unlink(emu.R(cur))
    os.symlink(pem, emu.R(cur))
    doc, u = _kubeconfig_user(path)
    u.pop("client-certificate-data", None)
    u.pop("client-key-data", None)
    u["client-certificate"] = cur
    u["client-key"] = cur
    emu.write(path, emu.yaml_dump(doc), 0o600)


# ---------------------------------------------------------------- kubeadm certs ...
def residual(delta):
    """k8s.io/apimachinery duration.ShortHumanDuration, as the RESIDUAL TIME column prints it."""
    s = int(delta.total_seconds())
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 60:
        return "%ds" % s
    if s < 3600:
        return "%dm" % (s // 60)
    if s < 86400:
        return "%dh" % (s // 3600)
    if s < 86400 * 365:
        return "%dd" % (s // 86400)
    return "%dy" % (s // (86400 * 365))


def _table(rows):
    """Go's tabwriter as kubeadm sets it up (min width 10, padding 3, spaces); rows of strings."""
    widths = [max(10, max(len(r[i]) for r in rows if len(r) > i)) + 3 for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        if len(r) == 1:
            lines.append(r[0])
            continue
        lines.append("".join(c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)).rstrip())
    return "\n".join(lines)


def _config_banner(verb):
    if emu.exists(KUBE + "/admin.conf"):
        out("[%s] Reading configuration from the cluster..." % verb)
        out("[%s] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'" % verb)
    else:
        out("[%s] Error reading configuration from the Cluster. Falling back to default configuration" % verb)
    out()


def cmd_check_expiration(argv):
    _config_banner("check-expiration")
    now = datetime.datetime.now(datetime.timezone.utc)
    fmt = lambda d: d.strftime("%b %d, %Y %H:%M UTC")
    rows = [["CERTIFICATE", "EXPIRES", "RESIDUAL TIME", "CERTIFICATE AUTHORITY", "EXTERNALLY MANAGED"]]
    for name, path, ca, _ in LEAVES:
        crt, _ = leaf_pem(path)
        if crt is None:
            rows.append(["!MISSING! " + name])
            continue
        end = not_after(crt)
        rows.append([name, fmt(end), residual(end - now), ca, "no"])
    out(_table(rows))
    out()
    rows = [["CERTIFICATE AUTHORITY", "EXPIRES", "RESIDUAL TIME", "EXTERNALLY MANAGED"]]
    for name, base in CAS:
        crt = emu.read(base + ".crt")
        if crt is None:
            rows.append(["!MISSING! " + name])
            continue
        end = not_after(crt)
        rows.append([name, fmt(end), residual(end - now), "no" if emu.exists(base + ".key") else "yes"])
    out(_table(rows))
    return 0


def cmd_renew(argv):
    names = [n for n, _, _, _ in LEAVES]
    pos = [a for a in argv if not a.startswith("-")]
    if not pos:
        raise Fail("missing subcommand; \"renew\" is not meant to be run on its own\n"
                   "Available subcommands: all, " + ", ".join(names))
    what = pos[0]
    if what != "all" and what not in names:
        raise Fail('unknown command "%s" for "kubeadm certs renew"' % what)
    _config_banner("renew")
    for name, path, ca, long in LEAVES:
        if what != "all" and name != what:
            continue
        if leaf_pem(path)[0] is None:
            out("MISSING! %s" % long)
            continue
        renew_leaf(path, ca)
        out("%s renewed" % long)
    if what == "all":
        out()
        out("Done renewing certificates. You must restart the kube-apiserver, kube-controller-manager, kube-scheduler and etcd, "
            "so that they can use the new certificates.")
    return 0


def cmd_certs(argv):
    """kubeadm certs SUBCOMMAND: the dispatch kubeadm's main hands `certs` to."""
    if not argv or argv[0] in ("-h", "--help"):
        out("Commands related to handling Kubernetes certificates\n\nAvailable Commands:\n"
            "  certificate-key, check-expiration, generate-csr, renew")
        return 0
    try:
        fn = {"check-expiration": cmd_check_expiration, "renew": cmd_renew}.get(argv[0])
        if fn is None:
            raise Fail('unknown command "%s" for "kubeadm certs"' % argv[0])
        if not emu.exists(PKI + "/ca.crt") and argv[0] == "renew":
            raise Fail("[renew] unable to load the certificate authority: couldn't load the certificate file %s/ca.crt: "
                       "open %s/ca.crt: no such file or directory" % (PKI, PKI))
        return fn(argv[1:])
    except Fail as e:
        sys.stderr.write("%s\nTo see the stack trace of this error execute with --v=5 or higher\n" % e)
        return 1
