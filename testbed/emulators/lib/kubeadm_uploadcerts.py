"""kubeadm's upload-certs (`init --upload-certs`, `init phase upload-certs`, `certs certificate-key`), as
cmd/kubeadm/app/phases/copycerts/copycerts.go does it: the control-plane CAs and service-account keys encrypted with
AES-256-GCM under the certificate key (32 random bytes, hex) into Secret kube-system/kubeadm-certs, owned by a bootstrap
token of 2 hours (the garbage collector deletes the Secret with the token), readable by bootstrappers through Role and
RoleBinding kubeadm:kubeadm-certs. Each value is nonce(12) || ciphertext || tag(16), then base64 as any Secret's data."""
import os
import random
import string
import time

import emu

PKI = "/etc/kubernetes/pki"
# cert file (under PKI) -> the Secret's key ("/" replaced by "-"); stacked etcd
FILES = ["ca.crt", "ca.key", "front-proxy-ca.crt", "front-proxy-ca.key", "sa.pub", "sa.key", "etcd/ca.crt", "etcd/ca.key"]
TOKEN_DESCRIPTION = "Proxy for managing TTL for the kubeadm-certs secret"
TOKEN_TTL = 2 * 3600
NAME = "kubeadm-certs"
ROLE = "kubeadm:kubeadm-certs"


class KeyError_(Exception):
    pass


def new_key():
    return os.urandom(32).hex()


def check_key(key, field="certificateKey"):
    """validation.go ValidateCertificateKey, as a field error (Go's hex.DecodeString: a bad byte first, then the length)."""
    bad = next((c for c in key if c not in string.hexdigits), None)
    msg = ("encoding/hex: invalid byte: U+%04X '%s'" % (ord(bad), bad) if bad
           else "encoding/hex: odd length hex string" if len(key) % 2 else None)
    if msg:
        raise KeyError_('%s: Invalid value: "%s": certificate key decoding error: %s' % (field, key, msg))
    raw = bytes.fromhex(key)
    if len(raw) != 32:
        raise KeyError_('%s: Invalid value: "%s": invalid certificate key size %d, the key must be an AES key of size 32'
                        % (field, key, len(raw)))
    return raw


def encrypt(raw_key, data):
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    nonce = os.urandom(12)
    return nonce + AESGCM(raw_key).encrypt(nonce, data, None)


def decrypt(raw_key, blob):
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    return AESGCM(raw_key).decrypt(blob[:12], blob[12:], None)


def _token():
    a = string.ascii_lowercase + string.digits
    r = random.SystemRandom()
    return "".join(r.choice(a) for _ in range(6)), "".join(r.choice(a) for _ in range(16))


def _put(client, path, obj):
    """Create, or replace what is there (kubeadm's CreateOrUpdate)."""
    try:
        return client.request("POST", path, obj)
    except emu.ApiError as e:
        if e.status != 409:
            raise
        return client.request("PUT", path + "/" + obj["metadata"]["name"], obj)


def upload(client, key, out, print_key=True):
    """Stores the certificates under `key` (a new one when None) and prints what kubeadm prints; returns the key."""
    key = key or new_key()
    raw = check_key(key)
    tid, sec = _token()
    token = {"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
             "metadata": {"name": "bootstrap-token-" + tid, "namespace": "kube-system"},
             "data": {k: emu.b64(v) for k, v in {"token-id": tid, "token-secret": sec, "description": TOKEN_DESCRIPTION,
                                                   "expiration": emu.rfc3339(time.time() + TOKEN_TTL)}.items()}}
    made = client.request("POST", "/api/v1/namespaces/kube-system/secrets", token)
    data = {}
    for f in FILES:
        path = PKI + "/" + f
        content = emu.read(path).encode() if emu.exists(path) else b""
        data[f.replace("/", "-")] = emu.b64(encrypt(raw, content))
    out('[upload-certs] Storing the certificates in Secret "%s" in the "kube-system" Namespace' % NAME)
    _put(client, "/api/v1/namespaces/kube-system/secrets",
         {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
          "metadata": {"name": NAME, "namespace": "kube-system",
                       "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": made["metadata"]["name"],
                                            "uid": made["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
          "data": data})
    _put(client, "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles",
         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": ROLE, "namespace": "kube-system"},
          "rules": [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": [NAME], "verbs": ["get"]}]})
    _put(client, "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings",
         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": ROLE, "namespace": "kube-system"},
          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROLE},
          "subjects": [{"kind": "Group", "name": "system:bootstrappers:kubeadm:default-node-token"}]})
    if print_key:
        out("[upload-certs] Using certificate key:")
        out(key)
    return key


def cmd_phase(argv, parse, client, out, fail, load_config=None):
    """`kubeadm init phase upload-certs [--upload-certs] [--certificate-key K | --config F] [--skip-certificate-key-print]`
    (with --config, the key is InitConfiguration.certificateKey)."""
    f, _ = parse(argv, {"certificate-key", "config", "kubeconfig", "v"})
    if "config" in f and "certificate-key" in f:
        raise fail("can not mix '--config' with arguments [certificate-key]")
    if "upload-certs" not in f:
        out("[upload-certs] Skipping phase. Please see --upload-certs")
        return 0
    key = f.get("certificate-key")
    if "config" in f and load_config:
        key = (load_config(f["config"]).get("InitConfiguration") or {}).get("certificateKey")
    try:
        upload(client(f.get("kubeconfig")), key, out, "skip-certificate-key-print" not in f)
    except KeyError_ as e:
        raise fail("error: %s" % e)
    except emu.ApiError as e:
        raise fail("error: error execution phase upload-certs: error uploading certs: %s" % e)
    return 0


def cmd_certificate_key(out):
    """`kubeadm certs certificate-key`: a new key, printed."""
    out(new_key())
    return 0
